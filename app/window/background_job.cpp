#include "background_job.h"

#include "workspace.h"

#include <QFutureWatcher>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace headlight::app {

BackgroundJob::BackgroundJob(Workspace* workspace, QWidget* dialogParent)
    : workspace_(workspace)
    , dialogParent_(dialogParent)
    , watcher_(new QFutureWatcher<QString>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &BackgroundJob::collect);
}

BackgroundJob::~BackgroundJob() {
    cancel_ = true;
    watcher_->waitForFinished();
}

QProgressDialog* BackgroundJob::progress() const {
    return progress_;
}

bool BackgroundJob::running() const {
    return watcher_->isRunning();
}

void BackgroundJob::start(const QString& title, const QString& label, int64_t total, Work work) {
    workspace_->runner().setPaused(true);
    workspace_->runner().waitForIdle();
    cancel_ = false;
    progress_ = new QProgressDialog(label, tr("Cancel"), 0, int(total), dialogParent_);
    progress_->setWindowTitle(title);
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress_, &QProgressDialog::canceled, this, [this] { cancel_ = true; });
    progress_->show();
    watcher_->setFuture(QtConcurrent::run([this, work = std::move(work)] {
        const Progress progress = [this](int64_t done, int64_t steps) {
            QMetaObject::invokeMethod(this, [this, done, steps] {
                if (!progress_) return;
                if (steps > 0) progress_->setMaximum(int(steps));
                progress_->setValue(int(done));
            });
            return !cancel_;
        };
        try {
            work(progress);
        } catch (const std::exception& error) {
            return QString::fromUtf8(error.what()).section('\n', 0, 0);
        }
        return QString();
    }));
}

void BackgroundJob::collect() {
    // Why before closing the dialog: closing it emits canceled().
    cancelled_ = cancel_;
    if (progress_) progress_->close();
    Q_EMIT ended(watcher_->result());
    workspace_->runner().setPaused(false);
}
} // namespace headlight::app
