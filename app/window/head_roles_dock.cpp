#include "head_roles_dock.h"

#include "background_job.h"
#include "head_role_table_model.h"
#include "head_roles_figure.h"
#include "main_window.h"
#include "workspace.h"

#include <QClipboard>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

QSpinBox* probeBox(QWidget* parent, int low, int high, int value, const QString& tip) {
    auto* box = new QSpinBox(parent);
    box->setRange(low, high);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}
} // namespace

HeadRolesDock::HeadRolesDock(MainWindow* window)
    : QDockWidget(tr("Head table"), window)
    , window_(window)
    , job_(std::make_unique<BackgroundJob>(window->workspace(), window)) {
    setObjectName(QStringLiteral("headRolesDock"));
    setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    auto* page = new QWidget(this);
    scoreOn_ = new QComboBox(page);
    scoreOn_->addItems({tr("the text"), tr("probes")});
    scoreOn_->setToolTip(tr("Score the heads on the open text, or on generated probes: random "
                            "tokens repeated twice, as `headlight heads` scores them"));
    const analysis::GeneratedProbeSet defaults;
    seed_ = probeBox(page, 0, 2147483647, defaults.seed,
                     tr("The probes' seed: the same seed gives the same ids and scores"));
    count_ = probeBox(page, 1, 1000, defaults.count, tr("How many probes"));
    length_ = probeBox(page, 1, 100000, defaults.length,
                       tr("Random tokens per probe, then repeated once (twice must fit the "
                          "model's context)"));
    score_ = new QPushButton(tr("Score"), page);
    score_->setToolTip(tr("Score the probes again with this seed, count and length"));
    caption_ = new QLabel(page);
    caption_->setWordWrap(true);
    // Why a floor: a dock's layout may not give a wrapped label the height of its lines.
    caption_->setMinimumHeight(3 * caption_->fontMetrics().lineSpacing() + 4);
    caption_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    model_ = new HeadRoleTableModel(this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(model_);
    sorted_->setSortRole(HeadRoleTableModel::kSortRole);
    table_ = new QTableView(page);
    table_->setObjectName(QStringLiteral("headRoleTable"));
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(HeadRoleTableModel::Layer, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    // Why stretched: every column in the dock's width, none behind a scroll bar.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->horizontalHeader()->setMinimumSectionSize(24);
    auto* copy = new QPushButton(tr("Copy"), page);
    copy->setToolTip(tr("The table as CSV on the clipboard"));
    auto* exportCsv = new QPushButton(tr("Export CSV…"), page);

    // Why three narrow rows: the dock shares the right column with the variant panel, and a
    // wider one would take the width the view bar needs to keep every view one click away.
    auto* probes = new QGridLayout;
    probes->addWidget(new QLabel(tr("Score on"), page), 0, 0);
    probes->addWidget(scoreOn_, 0, 1);
    probes->addWidget(score_, 0, 2, 1, 2);
    probes->addWidget(new QLabel(tr("Seed"), page), 1, 0);
    probes->addWidget(seed_, 1, 1, 1, 3);
    probes->addWidget(new QLabel(tr("Count"), page), 2, 0);
    probes->addWidget(count_, 2, 1);
    probes->addWidget(new QLabel(tr("Length"), page), 2, 2);
    probes->addWidget(length_, 2, 3);
    probes->setColumnStretch(1, 1);
    probes->setColumnStretch(3, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(copy);
    buttons->addWidget(exportCsv);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(probes);
    layout->addWidget(caption_);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);
    setWidget(page);
    enableProbeBoxes(false);

    Workspace* workspace = window->workspace();
    connect(scoreOn_, &QComboBox::currentIndexChanged, this, &HeadRolesDock::onScoreOnChanged);
    connect(score_, &QPushButton::clicked, this, &HeadRolesDock::startJob);
    connect(copy, &QPushButton::clicked, this, &HeadRolesDock::copyTable);
    connect(exportCsv, &QPushButton::clicked, this, &HeadRolesDock::chooseExportFile);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this, workspace](const QModelIndex& current) {
                if (!current.isValid()) return;
                const int row = sorted_->mapToSource(current).row();
                workspace->selectHead(model_->layerOf(row), model_->headOf(row));
            });
    connect(workspace, &Workspace::figureUpdated, this, &HeadRolesDock::refreshTable);
    connect(workspace, &Workspace::resultShown, this, &HeadRolesDock::onResultShown);
    connect(workspace, &Workspace::scenarioProbesShown, this,
            [this](const std::optional<analysis::GeneratedProbeSet>& set) {
                if (set)
                    scoreProbes(*set);
                else
                    scoreOn_->setCurrentIndex(0);
            });
    connect(this, &QDockWidget::visibilityChanged, this, &HeadRolesDock::refreshTable);
    connect(job_.get(), &BackgroundJob::ended, this, &HeadRolesDock::collect);
    window->addPanelDock(this);
}

HeadRolesDock::~HeadRolesDock() = default;

std::optional<analysis::GeneratedProbeSet> HeadRolesDock::scoredProbes() const {
    const auto& roles = window_->workspace()->state().probeRoles;
    return roles ? std::optional(roles->probes) : std::nullopt;
}

analysis::GeneratedProbeSet HeadRolesDock::chosenProbes() const {
    return {seed_->value(), count_->value(), length_->value()};
}

void HeadRolesDock::scoreProbes(const analysis::GeneratedProbeSet& set) {
    seed_->setValue(set.seed);
    count_->setValue(set.count);
    length_->setValue(set.length);
    if (scoreOn_->currentIndex() == 1)
        startJob();
    else
        scoreOn_->setCurrentIndex(1); // onScoreOnChanged starts the job
}

void HeadRolesDock::enableProbeBoxes(bool enabled) {
    for (QWidget* box : {static_cast<QWidget*>(seed_), static_cast<QWidget*>(count_),
                         static_cast<QWidget*>(length_), static_cast<QWidget*>(score_)})
        box->setEnabled(enabled);
}

void HeadRolesDock::onScoreOnChanged(int index) {
    const bool probes = index == 1;
    enableProbeBoxes(probes);
    if (probes) {
        startJob();
        return;
    }
    attempted_.reset();
    window_->workspace()->setProbeRoles(nullptr);
    refreshTable();
}

// A new pass: re-score the probes when the model or the variant changed since the last job.
void HeadRolesDock::onResultShown() {
    if (scoreOn_->currentIndex() != 1 || job_->running()) return;
    Workspace* workspace = window_->workspace();
    const Attempt now{workspace->sharedModel().get(), workspace->variantJson(), chosenProbes()};
    // Why deferred: the job pauses the runner, which is still delivering this result.
    if (attempted_ != now) QTimer::singleShot(0, this, &HeadRolesDock::startJob);
}

void HeadRolesDock::startJob() {
    Workspace* workspace = window_->workspace();
    const std::shared_ptr<const LoadedModel> model = workspace->sharedModel();
    if (job_->running() || !model || scoreOn_->currentIndex() != 1) return;
    running_ = {model.get(), workspace->variantJson(), chosenProbes()};
    attempted_ = running_;
    const analysis::GeneratedProbeSet set = running_.probes;
    const variants::VariantSpec variant = workspace->variant();
    scored_.reset();
    job_->start(
        tr("Head roles on probes"), tr("Scoring every head on %1…").arg(probeSetPhrase(set)),
        set.count, [this, model, set, variant](const BackgroundJob::Progress& progress) {
            QElapsedTimer clock;
            clock.start();
            scored_ = scoreGeneratedProbes(*model, set, variant, [&progress](int done, int total) {
                return progress(done, total);
            });
            scoringMs_ = double(clock.nsecsElapsed()) / 1e6;
        });
}

void HeadRolesDock::collect(const QString& error) {
    Workspace* workspace = window_->workspace();
    const bool current = running_.model == workspace->sharedModel().get();
    if (error.isEmpty() && !job_->cancelled() && !current) {
        onResultShown(); // another model opened while the job ran: score that one
        return;
    }
    if (!error.isEmpty())
        window_->showError(tr("Cannot score the heads on probes"),
                           tr("The probes could not be run through this model."), error);
    // Why not kept when cancelled: the shown ones may be another variant's.
    workspace->setProbeRoles(error.isEmpty() && !job_->cancelled() ? scored_ : nullptr);
    // Why back to the text: nothing scored on probes is shown (refused or cancelled).
    if (!workspace->state().probeRoles) {
        const QSignalBlocker quiet(scoreOn_);
        scoreOn_->setCurrentIndex(0);
        onScoreOnChanged(0);
    }
    refreshTable();
}

void HeadRolesDock::refreshTable() {
    Workspace* workspace = window_->workspace();
    const bool rolesView = workspace->view() == ViewKind::HeadRoles;
    // Why raised only on entering the view: the user may have picked the variant tab since.
    if (rolesView && !wasRolesView_) raise();
    wasRolesView_ = rolesView;
    // Why only while shown: the text's scores cost a pass over every map.
    if (!isVisible()) return;
    const ForwardResult* result = workspace->result();
    const std::shared_ptr<const LoadedModel> loaded = workspace->sharedModel();
    const auto circuits = loaded ? loaded->circuits->computed() : nullptr;
    const bool copying = circuits && !circuits->copying.empty();
    const quint64 serial = result ? result->serial : 0;
    const void* scores = workspace->state().probeRoles.get();
    if (serial != shownSerial_ || scores != shownScores_ || copying != shownCopying_ ||
        model_->rowCount() == 0) {
        shownSerial_ = serial;
        shownScores_ = scores;
        shownCopying_ = copying;
        const HeadRoleScoring scoring = result && result->tokenCount() > 0
                                            ? headRoleScoring(*result, workspace->state())
                                            : HeadRoleScoring{};
        const bool fits =
            copying && circuits->layers == scoring.layers && circuits->heads == scoring.heads;
        model_->setScores(scoring.heads, scoring.scores,
                          fits ? circuits->copying : std::vector<double>{});
        QString text =
            scoring.scores.empty()
                ? (scoring.why.isEmpty() ? tr("Type a text to score the heads.") : scoring.why)
                : tr("Scored on %1").arg(scoring.source);
        if (scoring.probes)
            text += scoringMs_ < 1000 ? tr(" in %1 ms").arg(scoringMs_, 0, 'f', 0)
                                      : tr(" in %1 s").arg(scoringMs_ / 1000.0, 0, 'f', 1);
        if (!scoring.scores.empty() && !fits) text += tr(" · copying: open the Circuits view");
        caption_->setText(text);
        shownSource_ = scoring.source;
    }
    selectShown();
}

void HeadRolesDock::selectShown() {
    const ViewState& state = window_->workspace()->state();
    const int row = model_->rowOf(state.layer, state.head);
    if (row < 0 || row >= model_->rowCount()) return;
    const QModelIndex index = sorted_->mapFromSource(model_->index(row, 0));
    if (table_->selectionModel()->currentIndex().row() == index.row() &&
        table_->selectionModel()->isRowSelected(index.row()))
        return;
    const QSignalBlocker quiet(table_->selectionModel());
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    table_->viewport()->update();
    table_->scrollTo(index);
}

void HeadRolesDock::copyTable() const {
    QGuiApplication::clipboard()->setText(QString::fromUtf8(render::csvBytes(model_->table())));
}

bool HeadRolesDock::exportTable(const QString& path) {
    const std::shared_ptr<const LoadedModel> loaded = window_->workspace()->sharedModel();
    const QByteArray comments = QStringLiteral("# headlight head table: %1, scored on %2\n")
                                    .arg(loaded ? loaded->name() : QString(), shownSource_)
                                    .toUtf8();
    try {
        render::writeCsv(path, model_->table(), comments);
        return true;
    } catch (const std::exception& error) {
        window_->showError(tr("Cannot export the head table"), tr("The CSV was not written."),
                           QString::fromUtf8(error.what()));
        return false;
    }
}

void HeadRolesDock::chooseExportFile() {
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export the head table"), QStringLiteral("head_roles.csv"), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) path += QLatin1String(".csv");
    exportTable(path);
}
} // namespace headlight::app
