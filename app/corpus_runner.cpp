#include "corpus_runner.h"

#include "analysis/corpus.h"
#include "analysis/divergence.h"
#include "text_input.h"
#include "workspace.h"

#include <QAction>
#include <QFile>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QMessageBox>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headlight::app {

struct CorpusRunner::Outcome {
    analysis::CorpusResult result;
    int64_t longest = 0; // tokens of the longest text, for the entropy axis
};

namespace {

analysis::TextAnalysis analyseText(const LoadedModel& model, const variants::VariantSpec& variant,
                                   const std::string& text, std::atomic<int64_t>& longest) {
    const PreparedText prepared = prepareText(model.tokenizer.get(), QString::fromStdString(text));
    if (prepared.input.ids.empty()) throw std::invalid_argument("the text has no tokens");
    const Trace trace = model.model->forward(prepared.input, {}, variant);
    const Tensor attention = trace.stackedProbabilities();
    int64_t seen = longest.load();
    while (seen < attention.dim(2) && !longest.compare_exchange_weak(seen, attention.dim(2))) {
    }
    return {analysis::attentionEntropy(attention, trace.valid),
            analysis::adjacentLayerJsd(attention, trace.valid), trace.valid};
}
} // namespace

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

QStringList CorpusRunner::readCorpus(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        throw std::runtime_error(file.errorString().toStdString());
    QStringList texts;
    for (const QString& line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) texts << line.trimmed();
    return texts;
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
    std::vector<std::string> lines;
    for (const QString& text : texts)
        lines.push_back(text.toStdString());
    const variants::VariantSpec variant = workspace_->variant();
    watcher_->setFuture(QtConcurrent::run([this, model, variant, lines] {
        auto outcome = std::make_shared<Outcome>();
        std::atomic<int64_t> longest{0};
        const auto analyse = [&](const std::string& text) {
            return analyseText(*model, variant, text, longest);
        };
        const auto progress = [this](std::size_t done, std::size_t) {
            QMetaObject::invokeMethod(this, [this, done] {
                if (progress_) progress_->setValue(int(done));
            });
        };
        outcome->result = analysis::aggregateCorpus(lines, analyse, progress, cancel_);
        outcome->longest = longest.load();
        return outcome;
    }));
    return true;
}

void CorpusRunner::collect() {
    const std::shared_ptr<Outcome> outcome = watcher_->result();
    const analysis::CorpusResult& result = outcome->result;
    if (progress_) progress_->close();
    workspace_->runner().setPaused(false);
    const std::size_t analysed = result.accumulated.textCount();
    if (analysed > 0) {
        CorpusStats stats;
        // Why ln T of the longest text: no row can be more uncertain than uniform over its keys.
        const float entropyTop = float(std::log(std::max<double>(double(outcome->longest), 2.0)));
        stats.entropy = violinSet(result.accumulated.entropy(), entropyTop);
        stats.jsd = violinSet(result.accumulated.jsd(), 1.0f);
        stats.texts = analysed;
        stats.failed = result.errors.size();
        workspace_->setCorpusStats(std::move(stats));
        clear_->setEnabled(true);
    }
    Q_EMIT finished(analysed, result.errors.size(), result.cancelled);
}
} // namespace headlight::app
