#include "classroom.h"

#include "lesson_dock.h"
#include "main_window.h"
#include "presentation_window.h"
#include "scene_files.h"
#include "variant_dock.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QUndoStack>

namespace headlight::app {

// One lesson edit (add, remove, move): the whole lesson before and after, since lessons are a
// few small scenes and a snapshot cannot get out of step with the edit.
class LessonEdit : public QUndoCommand {
public:
    LessonEdit(Classroom* classroom, const QString& text, io::Lesson after, int currentAfter)
        : QUndoCommand(text)
        , classroom_(classroom)
        , before_(classroom->lesson_)
        , currentBefore_(classroom->current_)
        , after_(std::move(after))
        , currentAfter_(currentAfter) {}
    void redo() override { classroom_->replaceLesson(after_, currentAfter_); }
    void undo() override { classroom_->replaceLesson(before_, currentBefore_); }

private:
    Classroom* classroom_;
    io::Lesson before_;
    int currentBefore_;
    io::Lesson after_;
    int currentAfter_;
};

Classroom::Classroom(MainWindow* window)
    : QObject(window)
    , window_(window)
    , undo_(new QUndoStack(this)) {
    dock_ = new LessonDock(this, window);
    present_ = new QAction(tr("&Presentation mode"), this);
    present_->setShortcut(Qt::Key_F5);
    connect(present_, &QAction::triggered, this, &Classroom::present);
    window_->addPanelDock(dock_);
    addFileActions();
    window_->addViewActions({dock_->toggleViewAction(), present_});
    connect(window_, &MainWindow::documentDropped, this, &Classroom::openFile);
    Workspace* workspace = window_->workspace();
    connect(workspace, &Workspace::modelChanged, this, [this] { applyPending(); });
    connect(&window_->session(), &ModelSession::failed, this, [this] { pending_.reset(); });
    connect(workspace, &Workspace::resultShown, this, [this, workspace] {
        if (pendingQuery_ < 0 || pending_) return;
        workspace->selectQuery(pendingQuery_);
        pendingQuery_ = -1;
    });
}

Classroom::~Classroom() {
    delete presentation_;
}

io::Scene Classroom::captureScene(const std::string& caption) const {
    return {window_->workspace()->scenario(), {}, caption};
}

bool Classroom::applyScene(const io::Scene& scene, const QString& baseFolder) {
    QString folder;
    try {
        folder = resolveScenarioModel(scene, baseFolder);
    } catch (const io::SceneError& error) {
        window_->showError(tr("Cannot show the scene"), tr("The scene's model is missing."),
                           QString::fromUtf8(error.what()));
        return false;
    }
    pending_ = scene;
    const auto current = window_->workspace()->sharedModel();
    if (current && QDir(current->folder).absolutePath() == folder && !window_->session().busy())
        applyPending();
    else
        window_->openCheckpoint(folder);
    return true;
}

// Text first: the variant then re-runs at once on the new text (ForwardRunner: latest wins).
void Classroom::applyPending() {
    if (!pending_) return;
    const io::Scene scene = *std::exchange(pending_, std::nullopt);
    Workspace* workspace = window_->workspace();
    if (workspace->text() != QString::fromStdString(scene.text))
        workspace->setText(QString::fromStdString(scene.text));
    window_->variantDock()->apply(scene.variant);
    workspace->showScenarioView(scene);
    pendingQuery_ = scene.selection.query;
}

bool Classroom::openFile(const QString& path) {
    try {
        const std::string json = io::readSceneFile(path.toStdString());
        const QString base = QFileInfo(path).absolutePath();
        if (io::isLessonJson(json)) {
            undo_->clear();
            dock_->show();
            dock_->raise();
            setLesson(loadLesson(path), base);
            return true;
        }
        const io::Scene scene = loadScene(path);
        sceneCaption_ = scene.caption;
        current_ = -1;
        Q_EMIT stepChanged(current_);
        return applyScene(scene, base);
    } catch (const io::SceneError& error) {
        window_->showError(tr("Cannot open the file"),
                           tr("Headlight cannot open %1.").arg(QDir::toNativeSeparators(path)),
                           QString::fromUtf8(error.what()));
        return false;
    }
}

bool Classroom::saveScene(const QString& path, const std::string& caption, QString* error) const {
    try {
        saveSceneFile(path, captureScene(caption));
        return true;
    } catch (const std::exception& failure) {
        if (error) *error = QString::fromUtf8(failure.what());
        return false;
    }
}

bool Classroom::saveLesson(const QString& path, QString* error) const {
    try {
        saveLessonFile(path, lesson_);
        return true;
    } catch (const std::exception& failure) {
        if (error) *error = QString::fromUtf8(failure.what());
        return false;
    }
}

void Classroom::setLesson(const io::Lesson& lesson, const QString& baseFolder) {
    baseFolder_ = baseFolder;
    replaceLesson(lesson, -1);
    if (!lesson_.steps.empty()) goToStep(0);
}

void Classroom::replaceLesson(const io::Lesson& lesson, int current) {
    lesson_ = lesson;
    current_ = std::min(current, int(lesson_.steps.size()) - 1);
    Q_EMIT lessonChanged();
    Q_EMIT stepChanged(current_);
}

std::string Classroom::caption() const {
    return current_ >= 0 && current_ < int(lesson_.steps.size())
               ? lesson_.steps[std::size_t(current_)].caption
               : sceneCaption_;
}

void Classroom::goToStep(int index) {
    if (index < 0 || index >= int(lesson_.steps.size())) return;
    current_ = index;
    Q_EMIT stepChanged(current_);
    applyScene(lesson_.steps[std::size_t(index)], baseFolder_);
}

void Classroom::step(int delta) {
    if (lesson_.steps.empty()) return;
    goToStep(std::clamp(current_ + delta, 0, int(lesson_.steps.size()) - 1));
}

void Classroom::addCurrentAsStep(const std::string& title, const std::string& caption) {
    io::Lesson next = lesson_;
    if (next.title.empty()) next.title = "Untitled lesson";
    io::Scene scene = captureScene(caption);
    scene.title = title;
    const int at = current_ + 1;
    next.steps.insert(next.steps.begin() + at, scene);
    undo_->push(new LessonEdit(this, tr("Add step"), next, at));
}

void Classroom::removeStep(int index) {
    if (index < 0 || index >= int(lesson_.steps.size())) return;
    io::Lesson next = lesson_;
    next.steps.erase(next.steps.begin() + index);
    undo_->push(
        new LessonEdit(this, tr("Remove step"), next, std::min(index, int(next.steps.size()) - 1)));
}

void Classroom::moveStep(int index, int delta) {
    const int target = index + delta;
    if (index < 0 || target < 0 || std::max(index, target) >= int(lesson_.steps.size())) return;
    io::Lesson next = lesson_;
    std::swap(next.steps[std::size_t(index)], next.steps[std::size_t(target)]);
    undo_->push(new LessonEdit(this, tr("Move step"), next, target));
}

void Classroom::addFileActions() {
    auto* open = new QAction(tr("Open scene or &lesson…"), this);
    connect(open, &QAction::triggered, this, &Classroom::chooseFileToOpen);
    auto* lessons = new QMenu(tr("Built-in l&essons"), window_);
    for (const QString& path : builtinLessons())
        lessons->addAction(QFileInfo(path).completeBaseName(), this,
                           [this, path] { openFile(path); });
    lessons->setEnabled(!lessons->isEmpty());
    auto* saveScene = new QAction(tr("Save &scene…"), this);
    connect(saveScene, &QAction::triggered, this, &Classroom::chooseSceneToSave);
    auto* saveLesson = new QAction(tr("Save lesso&n…"), this);
    connect(saveLesson, &QAction::triggered, this, &Classroom::chooseLessonToSave);
    window_->addFileActions({open, lessons->menuAction(), saveScene, saveLesson});
}

void Classroom::chooseFileToOpen() {
    const QString path = QFileDialog::getOpenFileName(window_, tr("Open scene or lesson"), {},
                                                      tr("Scenes and lessons (*.json)"));
    if (!path.isEmpty()) openFile(path);
}

void Classroom::chooseSceneToSave() {
    bool ok = false;
    const QString caption = QInputDialog::getText(
        window_, tr("Save scene"), tr("Caption (what to look at):"), QLineEdit::Normal, {}, &ok);
    if (!ok) return;
    const QString path = QFileDialog::getSaveFileName(
        window_, tr("Save scene"), QStringLiteral("scene.json"), tr("Scenes (*.json)"));
    QString error;
    if (!path.isEmpty() && !saveScene(path, caption.toStdString(), &error))
        window_->showError(tr("Cannot save the scene"), tr("The scene was not saved."), error);
}

void Classroom::chooseLessonToSave() {
    const QString path = QFileDialog::getSaveFileName(
        window_, tr("Save lesson"), QStringLiteral("lesson.json"), tr("Lessons (*.json)"));
    QString error;
    if (!path.isEmpty() && !saveLesson(path, &error))
        window_->showError(tr("Cannot save the lesson"), tr("The lesson was not saved."), error);
}

PresentationWindow* Classroom::presentation() const {
    return presentation_;
}

void Classroom::present() {
    if (!presentation_) presentation_ = new PresentationWindow(this, window_->workspace());
    presentation_->start();
}
} // namespace headlight::app
