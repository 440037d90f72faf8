#pragma once
// The training scrubber (docs/scrubber.md): a bar docked under the view, shown while the open
// model is a checkpoint of a series (a zoo run's step folder, or a snapshot of a Hugging Face
// cache repository with several revisions). Its slider opens another checkpoint of the series,
// and the window redraws the current view for the same text; [ and ] step it. "Measure over
// training" runs every checkpoint on the text (BackgroundJob: progress and Cancel) and fills the
// Training view's lines, whose marker follows the slider.

#include "io/checkpoint_series.h"
#include "training_figure.h"

#include <QDockWidget>
#include <memory>
#include <optional>

class QAction;
class QLabel;
class QPushButton;
class QSlider;

namespace headlight::app {

class BackgroundJob;
class MainWindow;

class TrainingScrubber : public QDockWidget {
    Q_OBJECT
public:
    explicit TrainingScrubber(MainWindow* window);
    ~TrainingScrubber() override;

    // The series of the open model, if it is part of one, and the checkpoint shown.
    const std::optional<io::CheckpointSeries>& series() const { return series_; }
    int checkpoint() const { return checkpoint_; }
    QSlider* slider() const { return slider_; }
    QPushButton* measureButton() const { return measure_; }
    BackgroundJob* job() const { return job_.get(); }
    const std::shared_ptr<const TrainingCurves>& curves() const { return curves_; }

public Q_SLOTS:
    void step(int delta); // [ and ]: the previous or next checkpoint
    void measure();       // every checkpoint on the current text, for the Training view

private:
    void onModelLoaded();
    void showCheckpoint(int index); // the slider moved: open that checkpoint
    void collect(const QString& error);
    void updateLabel();

    MainWindow* window_;
    std::optional<io::CheckpointSeries> series_;
    int checkpoint_ = -1;
    std::shared_ptr<const TrainingCurves> curves_;
    std::vector<CheckpointMetrics> measured_; // written by the job's worker, read in collect()
    QString measuredText_;
    QLabel* name_ = nullptr;
    QSlider* slider_ = nullptr;
    QLabel* position_ = nullptr;
    QPushButton* measure_ = nullptr;
    std::unique_ptr<BackgroundJob> job_; // last: destroyed first, waiting for its work
};
} // namespace headlight::app
