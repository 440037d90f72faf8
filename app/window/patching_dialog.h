#pragma once
// View ▸ Activation patching…: a clean and a corrupted text, the target and foil tokens and the
// grid, run with the current model and variant (app/session/activation_patching.h) on a worker
// thread, one pass per cell, behind a progress bar with Cancel; the forward runner is paused
// meanwhile because a backend runs one pass at a time (as corpus_runner.h). The result is the
// recovered-logit-difference heatmap of app/figures/patching_figure.h.

#include "activation_patching.h"

#include <QDialog>
#include <atomic>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
template <typename T> class QFutureWatcher;

namespace headlight::app {

class FigureView;
class Workspace;

class PatchingDialog : public QDialog {
    Q_OBJECT
public:
    PatchingDialog(Workspace* workspace, QWidget* parent = nullptr);
    ~PatchingDialog() override;

    QLineEdit* cleanEdit() const { return clean_; }
    QLineEdit* corruptEdit() const { return corrupt_; }
    QLineEdit* targetEdit() const { return target_; }
    QLineEdit* foilEdit() const { return foil_; }
    QComboBox* gridBox() const { return grid_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* status() const { return status_; }
    FigureView* figureView() const { return view_; }
    bool running() const;
    // Starts a run from the fields; a mistake in them shows in the status line instead.
    void start();

Q_SIGNALS:
    void finished(bool completed); // false: cancelled or refused

private:
    struct Outcome;
    void collect();
    void setRunning(bool running);

    Workspace* workspace_;
    QLineEdit *clean_, *corrupt_, *target_, *foil_;
    QComboBox* grid_;
    QPushButton *run_, *cancel_;
    QProgressBar* progress_;
    QLabel* status_;
    FigureView* view_;
    QFutureWatcher<std::shared_ptr<Outcome>>* watcher_;
    std::atomic<bool> cancelled_{false};
};
} // namespace headlight::app
