#include "corpus_runner.h"

#include "background_job.h"
#include "corpus_analysis.h"
#include "workspace.h"

#include <QAction>
#include <QFileDialog>
#include <QMessageBox>
#include <stdexcept>

namespace headlight::app {

CorpusRunner::CorpusRunner(Workspace* workspace, QWidget* dialogParent)
    : QObject(workspace)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , open_(new QAction(tr("Open &corpus…"), this))
    , clear_(new QAction(tr("Violins over the current &text"), this))
    , job_(std::make_unique<BackgroundJob>(workspace, dialogParent)) {
    open_->setStatusTip(tr("Entropy and JSD violins over a file of texts, one per line"));
    clear_->setEnabled(false);
    connect(open_, &QAction::triggered, this, &CorpusRunner::chooseFile);
    connect(clear_, &QAction::triggered, this, [this] {
        workspace_->setCorpusStats(std::nullopt);
        clear_->setEnabled(false);
    });
    connect(job_.get(), &BackgroundJob::ended, this, &CorpusRunner::collect);
}

void CorpusRunner::chooseFile() {
    const QString path = QFileDialog::getOpenFileName(dialogParent_, tr("Open corpus"), QString(),
                                                      tr("Text, one per line (*.txt);;All (*)"));
    if (path.isEmpty()) return;
    QString why;
    try {
        if (start(readCorpus(path), &why)) return;
    } catch (const std::runtime_error& error) {
        why = QString::fromUtf8(error.what());
    }
    QMessageBox::warning(dialogParent_, tr("Cannot open the corpus"),
                         tr("Headlight cannot run %1: %2").arg(path, why));
}

CorpusRunner::~CorpusRunner() = default;

QProgressDialog* CorpusRunner::progress() const {
    return job_->progress();
}

bool CorpusRunner::running() const {
    return job_->running();
}

bool CorpusRunner::start(const QStringList& texts, QString* why) {
    std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model || texts.isEmpty() || running()) {
        if (why)
            *why = !model            ? tr("Open a checkpoint first.")
                   : texts.isEmpty() ? tr("The corpus has no text.")
                                     : tr("A corpus is already running.");
        return false;
    }
    corpus_ = {};
    const variants::VariantSpec variant = workspace_->variant();
    job_->start(tr("Corpus"), tr("Analysing %1 texts…").arg(texts.size()), texts.size(),
                [this, model, variant, texts](const BackgroundJob::Progress& progress) {
                    corpus_ = poolCorpus(
                        *model, variant, texts,
                        [&](std::size_t done, std::size_t total) {
                            progress(int64_t(done), int64_t(total));
                        },
                        job_->cancelFlag());
                });
    return true;
}

// poolCorpus keeps each text's failure in the result; `error` is one that stopped the whole run.
void CorpusRunner::collect(const QString& error) {
    if (!error.isEmpty()) QMessageBox::warning(dialogParent_, tr("Cannot run the corpus"), error);
    const analysis::CorpusResult& result = corpus_.pooled;
    const std::size_t analysed = result.accumulated.textCount();
    if (analysed > 0) {
        workspace_->setCorpusStats(corpus_.stats);
        clear_->setEnabled(true);
    }
    Q_EMIT finished(analysed, result.errors.size(), result.cancelled);
}
} // namespace headlight::app
