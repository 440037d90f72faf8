#include "corpus_runner.h"

#include "corpus_analysis.h"
#include "workspace.h"

#include <QAction>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QMessageBox>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <stdexcept>

namespace headlight::app {

struct CorpusRunner::Outcome {
    PooledCorpus corpus;
};

CorpusRunner::CorpusRunner(Workspace* workspace, QWidget* dialogParent)
    : QObject(workspace)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , open_(new QAction(tr("Open &corpus…"), this))
    , clear_(new QAction(tr("Violins over the current &text"), this))
    , watcher_(new QFutureWatcher<std::shared_ptr<Outcome>>(this)) {
    open_->setStatusTip(tr("Entropy and JSD violins over a file of texts, one per line"));
    clear_->setEnabled(false);
    connect(open_, &QAction::triggered, this, &CorpusRunner::chooseFile);
    connect(clear_, &QAction::triggered, this, [this] {
        workspace_->setCorpusStats(std::nullopt);
        clear_->setEnabled(false);
    });
    connect(watcher_, &QFutureWatcherBase::finished, this, &CorpusRunner::collect);
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

CorpusRunner::~CorpusRunner() {
    cancel_ = true;
    watcher_->waitForFinished();
}

QProgressDialog* CorpusRunner::progress() const {
    return progress_;
}

bool CorpusRunner::running() const {
    return watcher_->isRunning();
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
    // Why pause and wait: the backend runs one pass at a time and the runner may be mid-pass.
    workspace_->runner().setPaused(true);
    workspace_->runner().waitForIdle();
    cancel_ = false;
    progress_ = new QProgressDialog(tr("Analysing %1 texts…").arg(texts.size()), tr("Cancel"), 0,
                                    int(texts.size()), dialogParent_);
    progress_->setWindowTitle(tr("Corpus"));
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress_, &QProgressDialog::canceled, this, [this] { cancel_ = true; });
    progress_->show();
    const variants::VariantSpec variant = workspace_->variant();
    watcher_->setFuture(QtConcurrent::run([this, model, variant, texts] {
        const auto progress = [this](std::size_t done, std::size_t) {
            QMetaObject::invokeMethod(this, [this, done] {
                if (progress_) progress_->setValue(int(done));
            });
        };
        return std::make_shared<Outcome>(
            Outcome{poolCorpus(*model, variant, texts, progress, cancel_)});
    }));
    return true;
}

void CorpusRunner::collect() {
    const std::shared_ptr<Outcome> outcome = watcher_->result();
    const analysis::CorpusResult& result = outcome->corpus.pooled;
    if (progress_) progress_->close();
    workspace_->runner().setPaused(false);
    const std::size_t analysed = result.accumulated.textCount();
    if (analysed > 0) {
        workspace_->setCorpusStats(outcome->corpus.stats);
        clear_->setEnabled(true);
    }
    Q_EMIT finished(analysed, result.errors.size(), result.cancelled);
}
} // namespace headlight::app
