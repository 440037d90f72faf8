#include "lesson_dock.h"

#include "classroom.h"

#include <QGridLayout>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QUndoStack>
#include <QVBoxLayout>

namespace headlight::app {

LessonDock::LessonDock(Classroom* classroom, QWidget* parent)
    : QDockWidget(tr("Lesson"), parent)
    , classroom_(classroom) {
    setObjectName(QStringLiteral("lessonDock"));
    auto* page = new QWidget(this);
    title_ = new QLabel(page);
    title_->setWordWrap(true);
    list_ = new QListWidget(page);
    list_->setAlternatingRowColors(true);
    list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    caption_ = new QLabel(page);
    caption_->setObjectName(QStringLiteral("stepCaption"));
    caption_->setWordWrap(true);
    caption_->setFrameShape(QFrame::StyledPanel);
    const struct {
        QString label;
        QString tip;
        std::function<void()> run;
    } buttons[] = {
        {tr("◀ Previous"), tr("Previous step (Left in presentation)"),
         [this] { classroom_->step(-1); }},
        {tr("Next ▶"), tr("Next step (Right in presentation)"), [this] { classroom_->step(1); }},
        {tr("Add current"),
         tr("Add the window's model, text, variant, view and selection as a step"),
         [this] { addStep(); }},
        {tr("Remove"), tr("Remove the selected step"),
         [this] { classroom_->removeStep(selectedRow()); }},
        {tr("Move up"), tr("Move the selected step up"),
         [this] { classroom_->moveStep(selectedRow(), -1); }},
        {tr("Move down"), tr("Move the selected step down"),
         [this] { classroom_->moveStep(selectedRow(), 1); }},
        {tr("Undo edit"), tr("Undo the last add, remove or move"),
         [this] { classroom_->undoStack()->undo(); }},
        {tr("Redo edit"), tr("Redo the edit undone last"),
         [this] { classroom_->undoStack()->redo(); }},
    };
    auto* grid = new QGridLayout;
    int index = 0;
    for (const auto& button : buttons) {
        auto* push = new QPushButton(button.label, page);
        push->setToolTip(button.tip);
        connect(push, &QPushButton::clicked, this, button.run);
        grid->addWidget(push, index / 2, index % 2);
        ++index;
    }
    auto* present = new QPushButton(tr("Present (F5)"), page);
    connect(present, &QPushButton::clicked, classroom_, &Classroom::present);
    grid->addWidget(present, index / 2, 0, 1, 2);
    auto* layout = new QVBoxLayout(page);
    layout->addWidget(title_);
    layout->addWidget(list_, 1);
    layout->addWidget(caption_);
    layout->addLayout(grid);
    setWidget(page);
    connect(list_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { classroom_->goToStep(list_->row(item)); });
    connect(list_, &QListWidget::currentRowChanged, this, &LessonDock::showCaption);
    connect(classroom_, &Classroom::lessonChanged, this, &LessonDock::rebuild);
    connect(classroom_, &Classroom::stepChanged, this, &LessonDock::showStep);
    rebuild();
}

void LessonDock::rebuild() {
    const io::Lesson& lesson = classroom_->lesson();
    title_->setText(
        lesson.steps.empty()
            ? tr("No lesson: File ▸ Built-in lessons, or add the current view as a step.")
            : QStringLiteral("<b>%1</b><br>%2")
                  .arg(QString::fromStdString(lesson.title).toHtmlEscaped(),
                       QString::fromStdString(lesson.summary).toHtmlEscaped()));
    list_->clear();
    int number = 1;
    for (const io::Scene& scene : lesson.steps) {
        const QString title = scene.title.empty() ? QString::fromStdString(scene.view)
                                                  : QString::fromStdString(scene.title);
        auto* item = new QListWidgetItem(QStringLiteral("%1. %2").arg(number++).arg(title));
        item->setToolTip(QString::fromStdString(scene.caption));
        list_->addItem(item);
    }
    showStep(classroom_->currentStep());
}

void LessonDock::showStep(int index) {
    const QSignalBlocker block(list_);
    list_->setCurrentRow(index);
    showCaption(index);
}

void LessonDock::showCaption(int index) {
    const io::Lesson& lesson = classroom_->lesson();
    caption_->setText(index >= 0 && index < int(lesson.steps.size())
                          ? QString::fromStdString(lesson.steps[std::size_t(index)].caption)
                          : QString());
    caption_->setVisible(!caption_->text().isEmpty());
}

int LessonDock::selectedRow() const {
    return list_->currentRow() >= 0 ? list_->currentRow() : classroom_->currentStep();
}

void LessonDock::addStep() {
    bool ok = false;
    const QString title =
        QInputDialog::getText(this, tr("Add step"), tr("Step title:"), QLineEdit::Normal, {}, &ok);
    if (!ok) return;
    const QString caption = QInputDialog::getMultiLineText(
        this, tr("Add step"), tr("Caption (what to look at):"), {}, &ok);
    if (ok) classroom_->addCurrentAsStep(title.toStdString(), caption.toStdString());
}
} // namespace headlight::app
