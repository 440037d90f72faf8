#pragma once
// Classroom mode (docs/scenes.md): scenes and lessons in the window. The classroom turns the
// window's state into a scene (captureScene) and a scene back into state (applyScene: the model
// loads on the worker thread as File ▸ Open does, then the text, variant, view and selection
// follow). It holds the open lesson, its current step and an undo stack of lesson edits, and owns
// the lesson dock and the presentation window. It sits above the window (app/classroom over
// app/window) and plugs its dock and menu entries in through MainWindow's panel and menu slots.
//
//   File ▸ Save scene… / Open scene or lesson… / Save lesson… / Lessons ▸ (built-in)
//   View ▸ Presentation mode (F5)

#include "io/scene_file.h"

#include <QObject>
#include <QPointer>
#include <optional>

class QAction;
class QUndoStack;

namespace headlight::app {

class LessonDock;
class MainWindow;
class PresentationWindow;

class Classroom : public QObject {
    Q_OBJECT
public:
    // Attaches to `window` (which owns it): its dock and its File and View menu entries.
    explicit Classroom(MainWindow* window);
    ~Classroom() override;

    io::Scene captureScene(const std::string& caption = {}) const;
    // False (and an error dialog) when the scene's model cannot be found.
    bool applyScene(const io::Scene& scene, const QString& baseFolder);
    // A scene or lesson file; false (and an error dialog with the file's one-line message) when
    // it is malformed.
    bool openFile(const QString& path);
    bool saveScene(const QString& path, const std::string& caption, QString* error = nullptr) const;
    bool saveLesson(const QString& path, QString* error = nullptr) const;

    void setLesson(const io::Lesson& lesson, const QString& baseFolder);
    const io::Lesson& lesson() const { return lesson_; }
    int currentStep() const { return current_; }
    bool sceneLoading() const { return pending_.has_value(); } // a scene waits for its model
    // The caption on show: the current lesson step's, else that of the scene file opened last.
    std::string caption() const;
    void goToStep(int index);
    void step(int delta);

    // Lesson edits, each undoable.
    void addCurrentAsStep(const std::string& title, const std::string& caption);
    void removeStep(int index);
    void moveStep(int index, int delta);
    QUndoStack* undoStack() const { return undo_; }

    QAction* presentAction() const { return present_; }
    LessonDock* dock() const { return dock_; }
    PresentationWindow* presentation() const; // null until the first present()
    void present();

Q_SIGNALS:
    void lessonChanged();
    void stepChanged(int index);

private:
    friend class LessonEdit;
    void replaceLesson(const io::Lesson& lesson, int current);
    void applyPending();
    void addFileActions();
    void chooseSceneToSave();
    void chooseFileToOpen();
    void chooseLessonToSave();

    MainWindow* window_;
    io::Lesson lesson_;
    QString baseFolder_; // where the lesson's relative model paths start
    int current_ = -1;
    std::string sceneCaption_;         // of a scene file opened on its own
    std::optional<io::Scene> pending_; // applied once its model has loaded
    int pendingQuery_ = -1;            // selected once the scene's text has run
    QUndoStack* undo_;
    LessonDock* dock_;
    QPointer<PresentationWindow> presentation_;
    QAction* present_;
};
} // namespace headlight::app
