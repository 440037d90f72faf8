#include "training_scrubber.h"

#include "background_job.h"
#include "main_window.h"
#include "series_source.h"
#include "workspace.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>

namespace headlight::app {

TrainingScrubber::TrainingScrubber(MainWindow* window)
    : QDockWidget(tr("Training"), window)
    , window_(window)
    , job_(std::make_unique<BackgroundJob>(window->workspace(), window)) {
    setObjectName(QStringLiteral("trainingScrubber"));
    setFeatures(QDockWidget::DockWidgetMovable);
    auto* bar = new QWidget(this);
    auto* layout = new QHBoxLayout(bar);
    name_ = new QLabel(bar);
    slider_ = new QSlider(Qt::Horizontal, bar);
    slider_->setPageStep(1);
    slider_->setToolTip(tr("The checkpoint shown: [ and ] step it"));
    position_ = new QLabel(bar);
    measure_ = new QPushButton(tr("Measure over training"), bar);
    measure_->setToolTip(tr("Run every checkpoint on the text: the Training view draws the loss, "
                            "the in-context-learning score and the strongest heads' roles"));
    layout->addWidget(name_);
    layout->addWidget(slider_, 1);
    layout->addWidget(position_);
    layout->addWidget(measure_);
    setWidget(bar);
    window->addDockWidget(Qt::BottomDockWidgetArea, this);
    hide();
    for (const auto& [key, delta] :
         {std::pair(Qt::Key_BracketLeft, -1), std::pair(Qt::Key_BracketRight, 1)}) {
        auto* action =
            new QAction(delta < 0 ? tr("Previous checkpoint") : tr("Next checkpoint"), window);
        action->setShortcut(QKeySequence(QKeyCombination(key)));
        connect(action, &QAction::triggered, this, [this, delta = delta] { step(delta); });
        window->addAction(action);
    }
    connect(slider_, &QSlider::valueChanged, this, &TrainingScrubber::showCheckpoint);
    connect(measure_, &QPushButton::clicked, this, &TrainingScrubber::measure);
    connect(&window->session(), &ModelSession::loaded, this, &TrainingScrubber::onModelLoaded);
    connect(job_.get(), &BackgroundJob::ended, this, &TrainingScrubber::collect);
}

TrainingScrubber::~TrainingScrubber() = default;

void TrainingScrubber::onModelLoaded() {
    const QString folder = window_->session().current()->folder;
    const int known = series_ ? checkpointIndex(*series_, folder) : -1;
    if (known < 0) {
        const std::optional<SeriesPosition> found = seriesOfFolder(folder);
        curves_.reset();
        series_ = found ? std::optional(found->series) : std::nullopt;
        setVisible(found.has_value());
        if (!found) {
            window_->workspace()->setTraining(nullptr, -1);
            return;
        }
        name_->setText(QString::fromStdString(series_->name));
        const QSignalBlocker quiet(slider_);
        slider_->setRange(0, int(series_->checkpoints.size()) - 1);
    }
    checkpoint_ = known >= 0 ? known : checkpointIndex(*series_, folder);
    const QSignalBlocker quiet(slider_);
    slider_->setValue(checkpoint_);
    updateLabel();
    window_->workspace()->setTraining(curves_, checkpoint_);
}

void TrainingScrubber::updateLabel() {
    position_->setText(
        tr("%1 · %2 of %3")
            .arg(QString::fromStdString(series_->checkpoints[std::size_t(checkpoint_)].label))
            .arg(checkpoint_ + 1)
            .arg(series_->checkpoints.size()));
}

void TrainingScrubber::showCheckpoint(int index) {
    if (!series_ || index == checkpoint_) return;
    window_->openCheckpoint(
        QString::fromStdString(series_->checkpoints[std::size_t(index)].folder));
}

void TrainingScrubber::step(int delta) {
    if (series_ && isVisible()) slider_->setValue(slider_->value() + delta);
}

void TrainingScrubber::measure() {
    if (!series_ || job_->running()) return;
    const io::CheckpointSeries series = *series_;
    measuredText_ = window_->workspace()->text();
    const QString text = measuredText_;
    const BackendChoice choice = window_->backendChoice();
    measured_.clear();
    job_->start(tr("Measure over training"),
                tr("Running %1 checkpoints on the text…").arg(series.checkpoints.size()),
                int64_t(series.checkpoints.size()),
                [this, series, text, choice](const BackgroundJob::Progress& progress) {
                    measured_ = measureSeries(series, text, choice,
                                              [&progress](int done, int total, const QString&) {
                                                  return progress(done, total);
                                              });
                });
}

void TrainingScrubber::collect(const QString& error) {
    if (!error.isEmpty()) {
        window_->showError(tr("Cannot measure over training"),
                           tr("A checkpoint of the series could not be measured."), error);
        return;
    }
    if (job_->cancelled() || !series_ || measured_.size() != series_->checkpoints.size()) return;
    curves_ = std::make_shared<const TrainingCurves>(
        TrainingCurves{*series_, measuredText_, std::move(measured_)});
    window_->workspace()->setTraining(curves_, checkpoint_);
    window_->workspace()->setView(ViewKind::Training);
}
} // namespace headlight::app
