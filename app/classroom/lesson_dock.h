#pragma once
// The lesson dock: the open lesson's steps, the selected step's caption under them, and the buttons
// to play them (previous / next), edit them (add the window's state as a step, remove, move up and
// down; each undoable) and save the lesson, or present it full screen.

#include <QDockWidget>

class QLabel;
class QListWidget;

namespace headlight::app {

class Classroom;

class LessonDock : public QDockWidget {
    Q_OBJECT
public:
    LessonDock(Classroom* classroom, QWidget* parent = nullptr);
    QListWidget* steps() const { return list_; }

private:
    void rebuild();
    void showStep(int index);
    void showCaption(int index); // the caption of the step at `index` under the list
    void addStep();
    int selectedRow() const;

    Classroom* classroom_;
    QLabel* title_;
    QListWidget* list_;
    QLabel* caption_;
};
} // namespace headlight::app
