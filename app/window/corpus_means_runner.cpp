#include "corpus_means_runner.h"

#include "corpus_analysis.h"
#include "workspace.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>

namespace headlight::app {

CorpusMeansRunner::CorpusMeansRunner(Workspace* workspace, QWidget* dialogParent)
    : QObject(dialogParent)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , watcher_(new QFutureWatcher<std::shared_ptr<Outcome>>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &CorpusMeansRunner::collect);
}

CorpusMeansRunner::~CorpusMeansRunner() {
    cancel_ = true;
    watcher_->waitForFinished();
}

QProgressDialog* CorpusMeansRunner::progress() const {
    return progress_;
}

bool CorpusMeansRunner::running() const {
    return watcher_->isRunning();
}

bool CorpusMeansRunner::start(const QString& path, QString* why) {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    QStringList texts;
    QString reason = !model      ? tr("Open a checkpoint first.")
                     : running() ? tr("The head means of a corpus are already being computed.")
                                 : QString();
    if (reason.isEmpty()) {
        try {
            texts = readCorpus(path);
            if (texts.isEmpty()) reason = tr("%1 has no text.").arg(QFileInfo(path).fileName());
        } catch (const std::exception& error) {
            reason = tr("Cannot read %1: %2").arg(path, QString::fromUtf8(error.what()));
        }
    }
    if (!reason.isEmpty()) {
        if (why) *why = reason;
        return false;
    }
    // Why pause and wait: the backend runs one pass at a time and the runner may be mid-pass.
    workspace_->runner().setPaused(true);
    workspace_->runner().waitForIdle();
    cancel_ = false;
    progress_ = new QProgressDialog(tr("Mean head outputs over %1 texts…").arg(texts.size()),
                                    tr("Cancel"), 0, int(texts.size()), dialogParent_);
    progress_->setWindowTitle(tr("Corpus means"));
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress_, &QProgressDialog::canceled, this, [this] { cancel_ = true; });
    progress_->show();
    const variants::VariantSpec variant = workspace_->variant();
    const QString name = QFileInfo(path).fileName();
    watcher_->setFuture(QtConcurrent::run([this, model, variant, texts, name] {
        auto outcome = std::make_shared<Outcome>();
        const auto progress = [this](int done, int) {
            QMetaObject::invokeMethod(this, [this, done] {
                if (progress_) progress_->setValue(done);
            });
            return !cancel_;
        };
        try {
            outcome->means =
                corpusHeadMeans(*model->model, model->tokenizer.get(), variant, texts, progress);
            if (outcome->means) outcome->means->corpus = name;
        } catch (const std::exception& error) {
            outcome->error = QString::fromUtf8(error.what());
        }
        return outcome;
    }));
    return true;
}

void CorpusMeansRunner::collect() {
    const std::shared_ptr<Outcome> outcome = watcher_->result();
    if (progress_) progress_->close();
    workspace_->runner().setPaused(false);
    if (!outcome->error.isEmpty()) {
        Q_EMIT failed(outcome->error);
        return;
    }
    Q_EMIT finished(outcome->means
                        ? std::make_shared<const CorpusHeadMeans>(std::move(*outcome->means))
                        : nullptr);
}
} // namespace headlight::app
