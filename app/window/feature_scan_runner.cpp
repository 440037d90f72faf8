#include "feature_scan_runner.h"

#include "background_job.h"
#include "corpus_analysis.h"
#include "feature_analysis.h"
#include "feature_labels.h"
#include "file_hashes.h"
#include "model_session.h"
#include "workspace.h"

#include <QAction>
#include <QCryptographicHash>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStandardPaths>

namespace headlight::app {
namespace {

constexpr int kWindowContexts = 10;

// The kept scan at `path` when it is one of this corpus by this SAE; else nothing.
std::optional<FeatureScan> keptScan(const QString& path, const QJsonObject& settings) {
    if (!QFileInfo::exists(path)) return std::nullopt;
    try {
        FeatureScan scan = readFeatureScan(path);
        for (auto it = settings.begin(); it != settings.end(); ++it)
            if (scan.settings.value(it.key()) != it.value()) return std::nullopt;
        return scan;
    } catch (const FeatureScanError&) {
        return std::nullopt; // a damaged kept file is scanned again and replaced
    }
}
} // namespace

QString keptScanPath(const QString& modelFolder, const AttachedSae& sae,
                     const QString& corpusSha256, int contexts) {
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const QString& part :
         {QFileInfo(modelFolder).absoluteFilePath(), QFileInfo(sae.resolved).absoluteFilePath(),
          corpusSha256, QString::number(contexts)})
        hash.addData((part + QLatin1Char('\n')).toUtf8());
    const QString folder =
        QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + "/feature-scans";
    return folder + QLatin1Char('/') + QString::fromLatin1(hash.result().toHex().left(32)) +
           QStringLiteral(".json");
}

FeatureScanRunner::FeatureScanRunner(Workspace* workspace, QWidget* dialogParent)
    : QObject(dialogParent)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , scan_(new QAction(tr("S&can corpus for SAE features…"), this))
    , openScan_(new QAction(tr("Open feature s&can…"), this))
    , openLabels_(new QAction(tr("Open feature &labels…"), this))
    , job_(std::make_unique<BackgroundJob>(workspace, dialogParent)) {
    scan_->setStatusTip(tr("Each feature's strongest contexts over a text file (one text per "
                           "line) and how often it fires, for the feature page"));
    openScan_->setStatusTip(tr("Open a scan written by headlight features --scan"));
    openLabels_->setStatusTip(tr("Read feature descriptions from a Neuronpedia export "
                                 "(explanations/batch-N.jsonl.gz) on disk"));
    connect(scan_, &QAction::triggered, this, &FeatureScanRunner::chooseCorpus);
    connect(openScan_, &QAction::triggered, this, &FeatureScanRunner::chooseScan);
    connect(openLabels_, &QAction::triggered, this, &FeatureScanRunner::chooseLabels);
    connect(job_.get(), &BackgroundJob::ended, this, &FeatureScanRunner::collect);
}

FeatureScanRunner::~FeatureScanRunner() = default;

bool FeatureScanRunner::running() const {
    return job_->running();
}

QProgressDialog* FeatureScanRunner::progress() const {
    return job_->progress();
}

void FeatureScanRunner::chooseCorpus() {
    const QString path = QFileDialog::getOpenFileName(
        dialogParent_, tr("Scan corpus for SAE features (one text per line)"), QString(),
        tr("Text (*.txt);;All (*)"));
    QString why;
    if (!path.isEmpty() && !start(path, &why))
        QMessageBox::warning(dialogParent_, tr("Cannot scan the corpus"), why);
}

void FeatureScanRunner::chooseScan() {
    const QString path = QFileDialog::getOpenFileName(dialogParent_, tr("Open feature scan"),
                                                      QString(), tr("Feature scan (*.json)"));
    QString why;
    if (!path.isEmpty() && !openScan(path, &why))
        QMessageBox::warning(dialogParent_, tr("Cannot open the feature scan"), why);
}

void FeatureScanRunner::chooseLabels() {
    const QString path = QFileDialog::getOpenFileName(
        dialogParent_, tr("Open feature labels (a Neuronpedia export)"), QString(),
        tr("Neuronpedia explanations (*.jsonl.gz *.jsonl);;All (*)"));
    QString why;
    if (!path.isEmpty() && !openLabels(path, &why))
        QMessageBox::warning(dialogParent_, tr("Cannot open the feature labels"), why);
}

bool FeatureScanRunner::start(const QString& corpus, QString* why) {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    const std::shared_ptr<const AttachedSae> sae = workspace_->sae();
    const QString reason = !model      ? tr("Open a checkpoint first.")
                           : !sae      ? tr("Open an SAE first (File ▸ Open SAE…).")
                           : running() ? tr("A corpus is already being scanned.")
                                       : QString();
    if (!reason.isEmpty()) {
        if (why) *why = reason;
        return false;
    }
    result_.reset();
    fromDisk_ = false;
    job_->start(tr("Feature scan"), tr("Scanning %1 with the SAE %2…").arg(corpus, sae->name()), 0,
                [this, model, sae, corpus](const BackgroundJob::Progress& progress) {
                    const QStringList texts = readCorpus(corpus);
                    if (texts.isEmpty())
                        throw std::runtime_error(QFileInfo(corpus).fileName().toStdString() +
                                                 " has no text");
                    FeatureScanRequest request;
                    request.texts = texts;
                    request.contexts = kWindowContexts;
                    request.settings = {{"model", QFileInfo(model->folder).fileName()},
                                        {"sae", sae->name()},
                                        {"corpus", QFileInfo(corpus).fileName()},
                                        {"corpus_sha256", fileSha256(corpus)}};
                    request.progress = progress;
                    const QString kept = keptScanPath(
                        model->folder, *sae, request.settings.value("corpus_sha256").toString(),
                        request.contexts);
                    if ((result_ = keptScan(kept, request.settings))) {
                        fromDisk_ = true;
                        return;
                    }
                    result_ = scanFeatures(*model->model, model->tokenizer.get(), *sae, request);
                    if (result_->texts + result_->failed.size() < texts.size()) return; // cancelled
                    QDir().mkpath(QFileInfo(kept).absolutePath());
                    writeFeatureScan(kept, *result_);
                    result_->file = kept;
                });
    return true;
}

void FeatureScanRunner::collect(const QString& error) {
    QString why = error;
    bool attached = false;
    if (error.isEmpty() && result_ && !job_->cancelled()) {
        auto scan = std::make_shared<const FeatureScan>(std::move(*result_));
        attached = attachNotes(
            [&](const auto& sae) { return withFeatureNotes(sae, scan, nullptr); }, &why);
    }
    result_.reset();
    if (!why.isEmpty()) QMessageBox::warning(dialogParent_, tr("Cannot scan the corpus"), why);
    Q_EMIT finished(attached, attached && fromDisk_, why);
}

bool FeatureScanRunner::attachNotes(const Noting& noted, QString* why) {
    if (!workspace_->sae()) {
        if (why) *why = tr("Open an SAE first (File ▸ Open SAE…).");
        return false;
    }
    try {
        workspace_->setSae(noted(workspace_->sae()));
        workspace_->setView(ViewKind::Features);
        return true;
    } catch (const std::exception& refused) {
        if (why) *why = QString::fromUtf8(refused.what());
        return false;
    }
}

bool FeatureScanRunner::openScan(const QString& path, QString* why) {
    return attachNotes(
        [&](const auto& sae) {
            return withFeatureNotes(sae, std::make_shared<const FeatureScan>(readFeatureScan(path)),
                                    nullptr);
        },
        why);
}

bool FeatureScanRunner::openLabels(const QString& path, QString* why) {
    return attachNotes(
        [&](const auto& sae) {
            return withFeatureNotes(sae, nullptr,
                                    std::make_shared<const FeatureLabels>(readFeatureLabels(path)));
        },
        why);
}
} // namespace headlight::app
