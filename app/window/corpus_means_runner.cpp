#include "corpus_means_runner.h"

#include "background_job.h"
#include "corpus_analysis.h"
#include "workspace.h"

#include <QFileInfo>

namespace headlight::app {

CorpusMeansRunner::CorpusMeansRunner(Workspace* workspace, QWidget* dialogParent)
    : QObject(dialogParent)
    , workspace_(workspace)
    , job_(std::make_unique<BackgroundJob>(workspace, dialogParent)) {
    connect(job_.get(), &BackgroundJob::ended, this, &CorpusMeansRunner::collect);
}

CorpusMeansRunner::~CorpusMeansRunner() = default;

QProgressDialog* CorpusMeansRunner::progress() const {
    return job_->progress();
}

bool CorpusMeansRunner::running() const {
    return job_->running();
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
    means_.reset();
    const variants::VariantSpec variant = workspace_->variant();
    const QString name = QFileInfo(path).fileName();
    job_->start(
        tr("Corpus means"), tr("Mean head outputs over %1 texts…").arg(texts.size()), texts.size(),
        [this, model, variant, texts, name](const BackgroundJob::Progress& progress) {
            means_ = corpusHeadMeans(*model->model, model->tokenizer.get(), variant, texts,
                                     [&](int done, int total) { return progress(done, total); });
            if (means_) means_->corpus = name;
        });
    return true;
}

void CorpusMeansRunner::collect(const QString& error) {
    if (!error.isEmpty()) {
        Q_EMIT failed(error);
        return;
    }
    Q_EMIT finished(means_ ? std::make_shared<const CorpusHeadMeans>(std::move(*means_)) : nullptr);
}
} // namespace headlight::app
