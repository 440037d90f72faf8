#include "workspace.h"

#include "atlas_page.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "features_figure.h"
#include "figure_view.h"
#include "scene_files.h"
#include "streamed_figures.h"
#include "streamed_view_loader.h"
#include "token_strip.h"
#include "view_bar.h"

#include <QAction>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QThreadPool>
#include <QVBoxLayout>
#include <cmath>
#include <tuple>
#include <utility>

namespace headlight::app {
namespace {

constexpr int kMinStripCap = 72; // pixels: about two rows of token chips
// A pass says it is running, and which layer it is in, once it has run this long. Why not at once:
// each new text relays out the controls, a dozen times in a pass too short to read them (a
// BERT-base toggle's), and that work competed with the pass for the cores.
constexpr int kProgressAfterMs = 400;

// A classic sentence for attention: which noun does "it" attend to?
const QString kSampleText =
    QStringLiteral("The animal didn't cross the street because it was too tired.");

QFont scaledFont(const QWidget* widget, int pixels) {
    QFont font = widget->font();
    font.setPixelSize(pixels);
    return font;
}

QSpinBox* selectorBox(QWidget* parent, const QString& tip) {
    auto* box = new QSpinBox(parent);
    box->setRange(0, 0);
    box->setToolTip(tip);
    box->setMinimumWidth(64);
    return box;
}
} // namespace

Workspace::Workspace(QWidget* canvasPage, QWidget* parent)
    : QWidget(parent)
    , runner_(new ForwardRunner(this))
    , streamedLoader_(new StreamedViewLoader(this))
    , canvasPage_(canvasPage) {
    textEdit_ = new QPlainTextEdit(this);
    textEdit_->setFont(scaledFont(this, 20));
    textEdit_->setPlaceholderText(tr("Type a sentence; the model re-runs as you type."));
    textEdit_->setFixedHeight(QFontMetrics(textEdit_->font()).lineSpacing() * 3 + 16);
    errorLabel_ = new QLabel(this);
    errorLabel_->setObjectName("forwardError");
    errorLabel_->setStyleSheet(QStringLiteral("color: #b00020;"));
    errorLabel_->setFont(scaledFont(this, 15));
    errorLabel_->hide();
    tokenStrip_ = new TokenStrip(this);
    tokenArea_ = scrolledStrip(tokenStrip_, this);
    figureView_ = new FigureView(this);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(figureView_);
    pages_->addWidget(canvasPage_);
    atlasPage_ = new AtlasPage(this);
    pages_->addWidget(atlasPage_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 4);
    layout->addWidget(textEdit_);
    layout->addWidget(errorLabel_);
    layout->addWidget(tokenArea_);
    layout->addWidget(createControls());
    layout->addWidget(pages_, 1);
    createActions();

    connect(textEdit_, &QPlainTextEdit::textChanged, this, [this] {
        runner_->schedule(text());
        atlasDebounce_.start();
    });
    atlasDebounce_.setSingleShot(true);
    atlasDebounce_.setInterval(ForwardRunner::kDebounceMs);
    connect(&atlasDebounce_, &QTimer::timeout, this, &Workspace::updateAtlas);
    connect(atlasPage_, &AtlasPage::failed, this, &Workspace::atlasFailed);
    connect(atlasPage_, &AtlasPage::message, this, &Workspace::message);
    connect(atlasPage_, &AtlasPage::openOnCanvas, this, &Workspace::showAtlasOnCanvas);
    connect(&atlasPage_->runner(), &AtlasRunner::busyChanged, this, &Workspace::shareBackend);
    connect(runner_, &ForwardRunner::finished, this, &Workspace::onResult);
    connect(streamedLoader_, &StreamedViewLoader::ready, this, &Workspace::refresh);
    connect(runner_, &ForwardRunner::failed, this, &Workspace::onFailure);
    connect(runner_, &ForwardRunner::planned, this,
            [this](const QString& plan) { Q_EMIT message(tr("Memory plan: %1").arg(plan)); });
    connect(runner_, &ForwardRunner::refusedForMemory, this, [this](const QString& reason) {
        onFailure(reason);
        Q_EMIT memoryRefused(reason);
    });
    progressDelay_.setSingleShot(true);
    progressDelay_.setInterval(kProgressAfterMs);
    connect(&progressDelay_, &QTimer::timeout, this, &Workspace::updateSummary);
    connect(runner_, &ForwardRunner::busyChanged, this, [this](bool busy) {
        passProgress_.clear();
        if (busy)
            progressDelay_.start();
        else
            progressDelay_.stop();
        updateSummary();
        shareBackend();
    });
    connect(runner_, &ForwardRunner::progress, this, [this](int done, int total) {
        passProgress_ = tr("layer %1 of %2 · Esc cancels").arg(done).arg(total);
        if (!progressDelay_.isActive()) updateSummary();
    });
    connect(runner_, &ForwardRunner::cancelled, this,
            [this] { Q_EMIT message(tr("Forward pass cancelled")); });
    connect(tokenStrip_, &TokenStrip::tokenClicked, this, &Workspace::selectQuery);
    connect(tokenStrip_, &TokenStrip::tokenHovered, this, [this](int index) {
        if (index >= 0)
            Q_EMIT message(
                tr("Token #%1: “%2”").arg(index).arg(tokenStrip_->tokens().value(index)));
    });
    connect(figureView_, &FigureView::headClicked, this, &Workspace::selectHead);
    connect(figureView_, &FigureView::tokenClicked, this, &Workspace::selectQuery);
    connect(figureView_, &FigureView::panelRowClicked, this, &Workspace::onPanelRowClicked);
    connect(figureView_, &FigureView::heatmapRowClicked, this, [this](int row) {
        if (view_ != ViewKind::JsdMatrix) selectQuery(row);
    });
    connect(figureView_, &FigureView::readoutChanged, this, [this](const QString& text) {
        readoutLabel_->setText(text);
        Q_EMIT readoutChanged(text);
    });
    refresh();
}

// Two rows: the view tabs, then the selection, the pass summary and the hover read-out.
QWidget* Workspace::createControls() {
    auto* controls = new QWidget(this);
    std::vector<ViewBar::Entry> entries;
    for (int i = 0; i < kAllViewCount; ++i)
        entries.push_back({viewName(ViewKind(i)), viewGroupName(viewRow(ViewKind(i)).group),
                           viewSummary(ViewKind(i))});
    entries.push_back({tr("GPU canvas"), tr("Whole model"),
                       tr("the model's attention maps on the Vulkan canvas (Ctrl+9)")});
    entries.push_back({tr("Atlas"), tr("Whole model"),
                       tr("every head of a long text, tiled and zoomable (Ctrl+Shift+A)")});
    // Why this order: the whole-model maps are attention maps too, and beside the attention group
    // and the output group beside the statistics, the groups fill three rows at 1280 × 800
    // instead of four.
    const QStringList groupOrder{viewGroupName(ViewGroup::Attention), tr("Whole model"),
                                 viewGroupName(ViewGroup::Statistics),
                                 viewGroupName(ViewGroup::Output)};
    tabs_ = new ViewBar(entries, groupOrder, controls);
    tabs_->setFont(scaledFont(this, 13));
    layerBox_ = selectorBox(controls, tr("Layer (Alt+Up / Alt+Down)"));
    headBox_ = selectorBox(controls, tr("Head (Alt+Left / Alt+Right)"));
    averageBox_ = new QCheckBox(tr("Mean of heads"), controls);
    averageBox_->setToolTip(tr("Heatmap and token lines show the mean over the layer's heads"));
    summaryLabel_ = new QLabel(controls);
    readoutLabel_ = new QLabel(controls);
    readoutLabel_->setFont(scaledFont(this, 15));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Layer"), controls));
    row->addWidget(layerBox_);
    row->addSpacing(8);
    row->addWidget(new QLabel(tr("Head"), controls));
    row->addWidget(headBox_);
    row->addSpacing(8);
    row->addWidget(averageBox_);
    row->addSpacing(16);
    row->addWidget(createKnnControls(controls));
    row->addWidget(createFeatureControls(controls));
    row->addWidget(readoutLabel_, 1);
    row->addWidget(summaryLabel_);
    auto* stack = new QVBoxLayout(controls);
    stack->setContentsMargins(0, 0, 0, 0);
    stack->addWidget(tabs_);
    stack->addLayout(row);
    connect(tabs_, &ViewBar::currentChanged, this, &Workspace::onTabChanged);
    connect(layerBox_, &QSpinBox::valueChanged, this,
            [this](int layer) { selectHead(layer, state_.head); });
    connect(headBox_, &QSpinBox::valueChanged, this,
            [this](int head) { selectHead(state_.layer, head); });
    connect(averageBox_, &QCheckBox::toggled, this, &Workspace::setAverageHeads);
    return controls;
}

// The kNN-LM view's λ slider, shown with that view only.
QWidget* Workspace::createKnnControls(QWidget* parent) {
    knnControls_ = new QWidget(parent);
    knnSlider_ = new QSlider(Qt::Horizontal, knnControls_);
    knnSlider_->setObjectName(QStringLiteral("knnLambda"));
    knnSlider_->setRange(0, 100);
    knnSlider_->setMinimumWidth(160);
    knnSlider_->setToolTip(tr("λ, the weight of p_kNN in p_mix = λ·p_kNN + (1 − λ)·p_LM: re-mixes "
                              "the stored pass without running the model"));
    knnLabel_ = new QLabel(knnControls_);
    knnLabel_->setMinimumWidth(QFontMetrics(knnLabel_->font()).horizontalAdvance("λ = 0.00  "));
    auto* layout = new QHBoxLayout(knnControls_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(knnSlider_);
    layout->addWidget(knnLabel_);
    knnControls_->hide();
    connect(knnSlider_, &QSlider::valueChanged, this, [this](int value) {
        state_.knnLambda = value / 100.0;
        showKnnLambda();
        refresh();
    });
    return knnControls_;
}

// The Features view's feature chooser, shown with that view only.
QWidget* Workspace::createFeatureControls(QWidget* parent) {
    featureControls_ = new QWidget(parent);
    featureBox_ = new QSpinBox(featureControls_);
    featureBox_->setObjectName(QStringLiteral("featureBox"));
    featureBox_->setRange(-1, 0);
    featureBox_->setValue(-1);
    featureBox_->setSpecialValueText(tr("all tokens"));
    featureBox_->setMinimumWidth(110);
    featureBox_->setToolTip(tr("The feature whose page the Features view shows; \"all tokens\" "
                               "lists every token's strongest features (a click on a row of "
                               "the heatmap opens that feature's page)"));
    auto* layout = new QHBoxLayout(featureControls_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("Feature"), featureControls_));
    layout->addWidget(featureBox_);
    featureControls_->hide();
    connect(featureBox_, &QSpinBox::valueChanged, this, &Workspace::selectFeature);
    return featureControls_;
}

// A click on the Features overview's heatmap opens the page of the feature in that row.
void Workspace::onPanelRowClicked(int panel, int row) {
    if (view_ != ViewKind::Features || state_.feature >= 0 || panel != 0 || !result_ ||
        !result_->features)
        return;
    const std::vector<int> shown = featuresShown(*result_->features);
    if (row >= 0 && row < int(shown.size())) selectFeature(shown[std::size_t(row)]);
}

void Workspace::selectFeature(int feature) {
    state_.feature = std::max(feature, -1);
    const QSignalBlocker block(featureBox_);
    featureBox_->setValue(state_.feature);
    refresh();
    Q_EMIT featureSelected(state_.feature);
}

void Workspace::setSae(std::shared_ptr<const AttachedSae> sae) {
    featureBox_->setMaximum(sae ? sae->sae.config.dSae - 1 : 0);
    if (!sae) selectFeature(-1);
    runner_->setSae(std::move(sae));
    Q_EMIT saeChanged();
}

bool Workspace::attachSaeFolder(const QString& folder, QString* why) {
    try {
        setSae(attachSae(folder));
        return true;
    } catch (const std::exception& refused) {
        if (why) *why = QString::fromUtf8(refused.what()).section(QLatin1Char('\n'), 0, 0);
        return false;
    }
}

// The slider at the view's λ: the one it was moved to, else the pass's own.
void Workspace::showKnnLambda() {
    const variants::VariantSpec& variant = result_ ? result_->variant : runner_->variant();
    const double lambda = state_.knnLambda >= 0.0 ? state_.knnLambda
                          : variant.knn           ? double(variant.knn->lambda)
                                                  : 0.0;
    const QSignalBlocker block(knnSlider_);
    knnSlider_->setValue(int(std::lround(lambda * 100.0)));
    knnLabel_->setText(tr("λ = %1").arg(lambda, 0, 'f', 2));
}

void Workspace::createActions() {
    const struct {
        QString text;
        QKeySequence key;
        std::function<void()> run;
    } steps[] = {
        {tr("Previous layer"), QKeySequence(Qt::ALT | Qt::Key_Up), [this] { stepLayer(-1); }},
        {tr("Next layer"), QKeySequence(Qt::ALT | Qt::Key_Down), [this] { stepLayer(1); }},
        {tr("Previous head"), QKeySequence(Qt::ALT | Qt::Key_Left), [this] { stepHead(-1); }},
        {tr("Next head"), QKeySequence(Qt::ALT | Qt::Key_Right), [this] { stepHead(1); }},
        {tr("Cancel the running pass"), QKeySequence(Qt::Key_Escape),
         [this] { runner_->cancel(); }},
    };
    for (const auto& step : steps) {
        auto* action = new QAction(step.text, this);
        action->setShortcut(step.key);
        connect(action, &QAction::triggered, this, step.run);
        navigation_ << action;
    }
    for (int i = 0; i < kViewCount; ++i) {
        auto* action = new QAction(viewName(ViewKind(i)), this);
        action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        connect(action, &QAction::triggered, this, [this, i] { setView(ViewKind(i)); });
        viewActions_ << action;
    }
    auto* canvas = new QAction(tr("GPU canvas"), this);
    canvas->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_9));
    connect(canvas, &QAction::triggered, this, &Workspace::showCanvas);
    viewActions_ << canvas;
    auto* atlas = new QAction(tr("Atlas (long texts)"), this);
    atlas->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    connect(atlas, &QAction::triggered, this, &Workspace::showAtlas);
    viewActions_ << atlas;
    auto* atlasCanvas = new QAction(tr("Atlas on the GPU canvas"), this);
    atlasCanvas->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    connect(atlasCanvas, &QAction::triggered, this, &Workspace::showAtlasOnCanvas);
    viewActions_ << atlasCanvas;
    // Why no digit shortcuts here: Ctrl+1 … Ctrl+9 are taken by the figure views and the canvas.
    for (int i = kViewCount; i < kAllViewCount; ++i) {
        auto* action = new QAction(viewName(ViewKind(i)), this);
        if (ViewKind(i) == ViewKind::QkEmbedding)
            action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
        connect(action, &QAction::triggered, this, [this, i] { setView(ViewKind(i)); });
        viewActions_ << action;
    }
}

void Workspace::setModel(std::shared_ptr<const LoadedModel> model) {
    model_ = std::move(model);
    runner_->setModel(model_);
    result_.reset();
    atlasPage_->setModel(model_);
    const ModelSpec& spec = model_->model->spec();
    layerBox_->setRange(0, int(spec.layers) - 1);
    headBox_->setRange(0, int(spec.heads) - 1);
    selectHead(std::min(state_.layer, int(spec.layers) - 1),
               std::min(state_.head, int(spec.heads) - 1));
    if (text().trimmed().isEmpty() && model_->tokenizer) setText(kSampleText);
    corpus_.reset();
    state_.probeRoles.reset(); // another model's: the head table scores this one's
    // Why: another model's heads are not the knocked-out ones, nor its hooks the edited ones.
    if (!knockouts().empty()) setKnockouts({});
    Q_EMIT modelChanged(spec);
    runner_->runNow(text());
    updateAtlas();
}

void Workspace::setTraining(std::shared_ptr<const TrainingCurves> curves, int checkpoint) {
    state_.training = std::move(curves);
    state_.checkpoint = checkpoint;
    if (view_ == ViewKind::Training) refresh();
}

void Workspace::setProbeRoles(std::shared_ptr<const ProbeHeadRoles> roles) {
    state_.probeRoles = std::move(roles);
    if (view_ == ViewKind::HeadRoles) refresh();
}

void Workspace::setVariant(const QJsonObject& spec) {
    variantJson_ = spec;
    state_.knnLambda = -1.0; // the new pass's own λ until the slider moves
    try {
        const variants::VariantSpec variant = io::parseScenarioVariant(spec);
        runner_->setVariant(variant);
        atlasPage_->setVariant(spec, variant); // the Atlas draws the variant's own weights
        updateAtlas();
    } catch (const variants::VariantError& error) {
        onFailure(QString::fromUtf8(error.what()));
    }
}

void Workspace::setKnockouts(const HeadKnockouts& knockouts) {
    runner_->setKnockouts(knockouts);
    Q_EMIT knockoutsChanged(knockouts);
}

io::Scenario Workspace::scenario() const {
    io::Scenario scenario;
    if (model_) scenario.model = sceneModelName(model_->folder);
    scenario.text = text().toStdString();
    scenario.variant = variantJson_;
    scenario.ablation = knockouts().heads;
    scenario.ablationSource = knockouts().source.toStdString();
    scenario.edits = knockouts().edits;
    if (const std::shared_ptr<const AttachedSae>& attached = sae()) {
        scenario.sae = attached->folder.toStdString();
        if (attached->scan) scenario.saeScan = attached->scan->file.toStdString();
        if (attached->labels) scenario.saeLabels = attached->labels->path.toStdString();
    }
    setScenarioView(scenario, view_, state_);
    return scenario;
}

void Workspace::showScenarioView(const io::Scenario& scenario) {
    const ViewState state = scenarioViewState(scenario, 0);
    setView(viewKindFromId(scenario.view));
    setColormap(state.colormap);
    setAverageHeads(state.averageHeads);
    selectHead(state.layer, state.head);
    selectQuery(-1);
    // Why before the feature: the chooser's range is the attached SAE's.
    const io::Scenario shown = this->scenario();
    if (scenario.sae.empty() && sae()) {
        setSae(nullptr);
    } else if (!scenario.sae.empty() &&
               std::tie(scenario.sae, scenario.saeScan, scenario.saeLabels) !=
                   std::tie(shown.sae, shown.saeScan, shown.saeLabels)) {
        try {
            setSae(attachScenarioSae(scenario));
        } catch (const std::exception& refused) {
            Q_EMIT message(tr("Cannot read the scene's SAE: %1")
                               .arg(QString::fromUtf8(refused.what()).section('\n', 0, 0)));
        }
    }
    selectFeature(state.feature);
    // The corpus means stay: a scenario names the heads, not the corpus they were averaged over.
    const HeadKnockouts knockouts{scenario.ablation,
                                  QString::fromStdString(scenario.ablationSource),
                                  this->knockouts().corpusMeans, scenario.edits};
    if (knockouts != this->knockouts()) setKnockouts(knockouts);
    Q_EMIT scenarioProbesShown(scenario.headRoleProbes);
}

void Workspace::setCorpusStats(std::optional<CorpusStats> stats) {
    corpus_ = std::move(stats);
    refresh();
}

void Workspace::setText(const QString& text) {
    textEdit_->setPlainText(text);
}

QString Workspace::text() const {
    return textEdit_->toPlainText();
}

bool Workspace::drawing() const {
    return streamedLoader_->busy();
}

bool Workspace::ensureDrawable(ViewKind kind, const ViewState& state) {
    return streamedLoader_->ensure(kind, result_, state);
}

bool Workspace::canvasShown() const {
    return pages_->currentWidget() == canvasPage_;
}

bool Workspace::atlasShown() const {
    return pages_->currentWidget() == atlasPage_;
}

void Workspace::setView(ViewKind kind) {
    tabs_->setCurrentIndex(int(kind));
}

void Workspace::showCanvas() {
    tabs_->setCurrentIndex(kAllViewCount);
}

void Workspace::showAtlas() {
    tabs_->setCurrentIndex(kAllViewCount + 1);
}

void Workspace::showAtlasOnCanvas() {
    canvasAtlas_ = true;
    if (canvasShown())
        refresh();
    else
        showCanvas();
}

void Workspace::fitTokenStrip() {
    fitStripArea(tokenArea_, height(), kMinStripCap);
}

void Workspace::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitTokenStrip();
}

void Workspace::onTabChanged(int index) {
    pages_->setCurrentWidget(index == kAllViewCount       ? canvasPage_
                             : index == kAllViewCount + 1 ? static_cast<QWidget*>(atlasPage_)
                                                          : static_cast<QWidget*>(figureView_));
    if (!canvasShown()) canvasAtlas_ = false;
    if (index < kAllViewCount) view_ = ViewKind(index);
    // Why hidden in the Atlas: a long text's strip would take the map's height, and the map
    // labels its own tokens once they fit.
    tokenArea_->setVisible(!atlasShown());
    knnControls_->setVisible(view_ == ViewKind::KnnNeighbours && !canvasShown());
    featureControls_->setVisible(view_ == ViewKind::Features && !canvasShown());
    // Why here: the vanilla pass doubles the work, so it runs only while its view is open.
    const bool figureShown = pages_->currentWidget() == figureView_;
    runner_->setExtras(figureShown ? viewRow(view_).needs : PassExtras{});
    shareBackend();
    refresh();
}

void Workspace::selectHead(int layer, int head) {
    state_.layer = std::clamp(layer, layerBox_->minimum(), layerBox_->maximum());
    state_.head = std::clamp(head, headBox_->minimum(), headBox_->maximum());
    const QSignalBlocker blockLayer(layerBox_), blockHead(headBox_);
    layerBox_->setValue(state_.layer);
    headBox_->setValue(state_.head);
    refresh();
}

void Workspace::stepLayer(int delta) {
    selectHead(state_.layer + delta, state_.head);
}

void Workspace::stepHead(int delta) {
    selectHead(state_.layer, state_.head + delta);
}

void Workspace::selectQuery(int index) {
    state_.query = index >= 0 && index < tokenCount() ? index : -1;
    tokenStrip_->setSelected(state_.query);
    refresh();
}

void Workspace::setAverageHeads(bool average) {
    state_.averageHeads = average;
    const QSignalBlocker block(averageBox_);
    averageBox_->setChecked(average);
    refresh();
}

void Workspace::setColormap(render::Colormap map) {
    state_.colormap = map;
    atlasPage_->setColormap(map);
    refresh();
}

void Workspace::onResult(std::shared_ptr<const ForwardResult> result) {
    std::shared_ptr<const ForwardResult> previous = std::exchange(result_, std::move(result));
    // Why released on a worker: freeing the previous pass's maps hands their pages back to the
    // system, milliseconds the new pass's frame would otherwise wait for. Not when it may hold
    // the last reference to another model: a backend is closed on the GUI thread.
    if (previous && previous->model == result_->model)
        QThreadPool::globalInstance()->start(
            [previous = std::move(previous)]() mutable { previous.reset(); });
    errorLabel_->hide();
    tokenStrip_->setTokens(result_->tokens);
    fitTokenStrip();
    if (state_.query >= result_->tokenCount()) state_.query = -1;
    tokenStrip_->setSelected(state_.query);
    showKnnLambda();
    refresh();
    Q_EMIT resultShown(result_->tokenCount());
}

void Workspace::onFailure(const QString& reason) {
    errorLabel_->setText(tr("⚠ %1 (the views show the last text that ran)").arg(reason));
    errorLabel_->show();
    updateSummary();
}

void Workspace::refresh() {
    // A long pass's map is built off the GUI thread first; the canvas draws the selected map.
    const ViewKind shown = canvasShown() ? ViewKind::Heatmap : view_;
    const bool ready = streamedLoader_->ensure(shown, result_, state_);
    if (!ready)
        figureView_->setFigure(render::EmptyFigure{streamedWaitNote(shown, *result_, state_)});
    else if (isPanelView(view_))
        figureView_->setPanels(buildPanels(view_, result_.get(), state_),
                               buildFigure(view_, result_.get(), state_));
    else
        figureView_->setFigure(
            buildFigure(view_, result_.get(), state_, corpus_ ? &*corpus_ : nullptr));
    updateSummary();
    updateAtlas();
    Q_EMIT figureUpdated();
    if (ready) Q_EMIT refreshed();
}

void Workspace::updateAtlas() {
    if (!atlasShown() || !model_) return;
    atlasDebounce_.stop();
    atlasPage_->show(text(), state_.layer,
                     state_.averageHeads ? analysis::AttentionAtlas::kAllHeads : state_.head);
}

// Why: a backend runs one pass at a time. While the Atlas is shown, on its tab or the canvas (or
// its pass still runs) the views' pass waits, and the Atlas's pass waits for one of theirs
// already running.
void Workspace::shareBackend() {
    AtlasRunner& atlas = atlasPage_->runner();
    const bool holds = atlasShown() || canvasShowsAtlas() || atlas.busy();
    if (holds != atlasHoldsBackend_) {
        atlasHoldsBackend_ = holds;
        runner_->setPaused(holds);
    }
    atlas.setHeld(runner_->busy());
}

void Workspace::updateSummary() {
    QString text = result_ ? tr("%n token(s) · forward %1 ms", nullptr, result_->tokenCount())
                                 .arg(result_->forwardMs, 0, 'f', 1)
                           : QString();
    if (runner_->busy() && !progressDelay_.isActive())
        text +=
            passProgress_.isEmpty() ? tr("  · running…") : tr("  · running %1").arg(passProgress_);
    summaryLabel_->setText(text);
}

void Workspace::saveSettings() const {
    QSettings settings;
    settings.setValue("workspace/text", text());
    settings.setValue("workspace/view", tabs_->currentIndex());
    settings.setValue("workspace/averageHeads", state_.averageHeads);
    settings.setValue("workspace/colormap", int(state_.colormap));
}

void Workspace::restoreSettings() {
    QSettings settings;
    const QSignalBlocker block(textEdit_);
    setText(settings.value("workspace/text").toString());
    tabs_->setCurrentIndex(
        std::clamp(settings.value("workspace/view", 0).toInt(), 0, kAllViewCount + 1));
    setAverageHeads(settings.value("workspace/averageHeads", false).toBool());
    const int map = settings.value("workspace/colormap", int(render::Colormap::Viridis)).toInt();
    setColormap(map == int(render::Colormap::Cividis) ? render::Colormap::Cividis
                                                      : render::Colormap::Viridis);
}
} // namespace headlight::app
