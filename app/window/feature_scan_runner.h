#pragma once
// File ▸ Scan corpus for SAE features…, Open feature scan… and Open feature labels…: what the
// Features view's page shows beyond the open text. A scan runs the attached SAE over a corpus
// (one text per line) with the current model on a worker thread behind a progress dialog that can
// cancel it (the forward runner paused meanwhile), and is kept on disk: scanning the same corpus
// with the same model, SAE and contexts again reads the kept file instead. A scan written by
// `headlight features --scan` (or merged from shards) opens as it is; labels come from a
// Neuronpedia export read offline. Each attaches to the SAE (feature_analysis.h), so the page
// follows at once and a newly opened SAE starts without them.

#include "feature_scan.h"

#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>

class QAction;
class QProgressDialog;

namespace headlight::app {

class BackgroundJob;
class Workspace;
struct AttachedSae;

class FeatureScanRunner : public QObject {
    Q_OBJECT
public:
    FeatureScanRunner(Workspace* workspace, QWidget* dialogParent);
    ~FeatureScanRunner() override;

    QAction* scanAction() const { return scan_; }
    QAction* openScanAction() const { return openScan_; }
    QAction* openLabelsAction() const { return openLabels_; }

    // Scans `corpus`, or reads the kept scan of it; false (with `why`) when there is no model or
    // SAE, the corpus cannot be read or has no text, or a scan runs.
    bool start(const QString& corpus, QString* why = nullptr);
    // Attach a scan file or a Neuronpedia export; false with the one-line reason.
    bool openScan(const QString& path, QString* why = nullptr);
    bool openLabels(const QString& path, QString* why = nullptr);
    bool running() const;
    QProgressDialog* progress() const; // the dialog of the scan in flight, if any

Q_SIGNALS:
    // After each scan: `attached` false when it was cancelled or failed (`error` then says why,
    // empty when cancelled); `fromDisk` when the kept file served it.
    void finished(bool attached, bool fromDisk, const QString& error);

private:
    void chooseCorpus();
    void chooseScan();
    void chooseLabels();
    void collect(const QString& error);
    // The attached SAE made anew by `noted` (withFeatureNotes) and the Features view shown; false
    // with the one-line reason when no SAE is attached or `noted` throws.
    using Noting = std::function<std::shared_ptr<const AttachedSae>(
        const std::shared_ptr<const AttachedSae>&)>;
    bool attachNotes(const Noting& noted, QString* why);

    Workspace* workspace_;
    QWidget* dialogParent_;
    QAction* scan_;
    QAction* openScan_;
    QAction* openLabels_;
    bool fromDisk_ = false;             // the kept file served the scan in flight
    std::optional<FeatureScan> result_; // written by the job's work
    std::unique_ptr<BackgroundJob> job_;
};

// Where the scan of `corpusSha256` by `model` and `sae` keeping `contexts` is kept: a file named
// by the hash of them under the user's cache folder.
QString keptScanPath(const QString& modelFolder, const AttachedSae& sae,
                     const QString& corpusSha256, int contexts);
} // namespace headlight::app
