#pragma once
// The head table (docs/head-roles.md, "In the window"): a dock tabbed with the variant dock that
// lists every head's role scores, the ones the head-roles view draws, as a sortable table (click
// a column header; a score column sorts largest first). Clicking a row selects that head in the
// window, and the selected head's row follows the selection made elsewhere. "Score on" picks the
// open text or generated probes (seed, count, length), scored as `headlight heads` scores them,
// in a background job with progress and Cancel, again whenever the variant or the model changes;
// the head-roles view and a saved scene then use the probe scores. The table copies to the
// clipboard and exports to CSV (atomically). Each head's copying score joins it once the Circuits
// view has read the model's weights.

#include "analysis/head_roles.h"
#include "probe_head_roles.h"

#include <QDockWidget>
#include <QJsonObject>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace headlight::app {

class BackgroundJob;
class HeadRoleTableModel;
class MainWindow;
struct LoadedModel;

class HeadRolesDock : public QDockWidget {
    Q_OBJECT
public:
    explicit HeadRolesDock(MainWindow* window);
    ~HeadRolesDock() override;

    QTableView* table() const { return table_; }
    HeadRoleTableModel* model() const { return model_; }
    QComboBox* scoreOn() const { return scoreOn_; } // 0: the text, 1: probes
    QSpinBox* seedBox() const { return seed_; }
    QSpinBox* countBox() const { return count_; }
    QSpinBox* lengthBox() const { return length_; }
    QLabel* caption() const { return caption_; }
    BackgroundJob* job() const { return job_.get(); }
    // The probe set the shown scores come from; none while they are the text's.
    std::optional<analysis::GeneratedProbeSet> scoredProbes() const;
    double lastScoringMs() const { return scoringMs_; } // the last probe job's wall time

public Q_SLOTS:
    void copyTable() const;                // the table as CSV on the clipboard
    bool exportTable(const QString& path); // false after the error dialog said why
    void scoreProbes(const analysis::GeneratedProbeSet& set); // switches to probes and scores

private:
    analysis::GeneratedProbeSet chosenProbes() const;
    void enableProbeBoxes(bool enabled); // the probe set's boxes, with "the text" chosen off
    void onScoreOnChanged(int index);
    void onResultShown();
    void startJob();
    void collect(const QString& error);
    void refreshTable(); // the table from the view's scores, the selection from the workspace's
    void selectShown();  // the selected head's row
    void chooseExportFile();

    MainWindow* window_;
    QComboBox* scoreOn_ = nullptr;
    QSpinBox* seed_ = nullptr;
    QSpinBox* count_ = nullptr;
    QSpinBox* length_ = nullptr;
    QPushButton* score_ = nullptr;
    QLabel* caption_ = nullptr;
    QTableView* table_ = nullptr;
    HeadRoleTableModel* model_ = nullptr;
    QSortFilterProxyModel* sorted_ = nullptr;
    // What the job last ran on (whether or not it succeeded): a new pass re-scores only when the
    // model, the variant or the probe set differ, so a refused variant is not retried every pass.
    struct Attempt {
        const LoadedModel* model = nullptr;
        QJsonObject variant;
        analysis::GeneratedProbeSet probes;
        bool operator==(const Attempt&) const = default;
    };
    std::optional<Attempt> attempted_;
    Attempt running_;
    std::shared_ptr<const ProbeHeadRoles> scored_; // written by the job's worker
    double scoringMs_ = 0.0;
    // What the table shows, so a selection change does not rebuild it.
    quint64 shownSerial_ = 0;
    const void* shownScores_ = nullptr;
    bool shownCopying_ = false;
    QString shownSource_; // what the shown scores were scored on, for the CSV's comment
    bool wasRolesView_ = false;
    std::unique_ptr<BackgroundJob> job_; // last: destroyed first, waiting for its work
};
} // namespace headlight::app
