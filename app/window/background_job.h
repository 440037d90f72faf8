#pragma once
// Long work of the window (a corpus, a corpus's head means, a kNN datastore) on a worker thread,
// behind a window-modal progress dialog whose Cancel stops it at the work's next step. The
// forward runner is paused meanwhile, because a backend runs one pass at a time, and resumes when
// the work ends. The runners that use it keep only what is their own: reading their input and
// keeping their result. Why a runner holds it last (std::unique_ptr): it is destroyed first, and
// its destructor waits for work that may still write the runner's result.

#include <QObject>
#include <QPointer>
#include <QString>
#include <atomic>
#include <functional>

class QProgressDialog;
class QWidget;
template <typename T> class QFutureWatcher;

namespace headlight::app {

class Workspace;

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    // Reports `done` of `total` steps from the worker thread (total 0: not known yet); false once
    // Cancel was pressed, so the work can stop there.
    using Progress = std::function<bool(int64_t done, int64_t total)>;
    // Runs on the worker thread; a std::exception it throws is the job's one-line error.
    using Work = std::function<void(const Progress&)>;

    BackgroundJob(Workspace* workspace, QWidget* dialogParent);
    ~BackgroundJob() override; // cancels the work in flight and waits for it

    // Pauses the runner, opens the dialog (`title`, `label`, `total` steps) and starts `work`.
    // The caller checks running() first: one job at a time.
    void start(const QString& title, const QString& label, int64_t total, Work work);
    bool running() const;
    void cancel() { cancel_ = true; }
    // Whether Cancel was pressed before the work ended (valid in ended()).
    bool cancelled() const { return cancelled_; }
    const std::atomic<bool>& cancelFlag() const { return cancel_; }
    QProgressDialog* progress() const; // the dialog of the work in flight, if any

Q_SIGNALS:
    // On the GUI thread, after the dialog has closed and before the runner resumes (so a result
    // installed here serves the next pass); `error` is empty when the work finished or was
    // cancelled.
    void ended(const QString& error);

private:
    void collect();

    Workspace* workspace_;
    QWidget* dialogParent_;
    QPointer<QProgressDialog> progress_;
    QFutureWatcher<QString>* watcher_;
    std::atomic<bool> cancel_{false};
    bool cancelled_ = false;
};
} // namespace headlight::app
