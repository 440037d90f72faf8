#include "compare_dock.h"

#include "backend/backend_choice.h"
#include "default_model.h"
#include "figure_view.h"
#include "model_session.h"
#include "scene_files.h"
#include "streamed_figures.h"
#include "streamed_view_loader.h"
#include "variants/catalogue.h"
#include "workspace.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr int kSameModel = 0; // the model box's first entry: A's model

// B's selection: the workspace's, clamped to B's layers and heads.
ViewState clampedTo(const ForwardResult& result, ViewState state) {
    state.layer = std::clamp(state.layer, 0, result.layerCount() - 1);
    state.head = std::clamp(state.head, 0, result.headCount() - 1);
    if (state.query >= result.tokenCount()) state.query = -1;
    return state;
}

render::Figure scenarioFigure(const ForwardResult* result, const ViewState& state,
                              const QString& name) {
    if (!result || result->tokenCount() == 0)
        return render::EmptyFigure{name + QStringLiteral(": waiting for a forward pass…")};
    render::Figure figure = buildFigure(ViewKind::Heatmap, result, clampedTo(*result, state));
    if (auto* heatmap = std::get_if<render::HeatmapFigure>(&figure))
        heatmap->title = name + QStringLiteral(" · ") + heatmap->title;
    return figure;
}

// One side's figure: its heatmap (unless a long pass's map is still being built: `mapReady`),
// or (while the workspace shows the output effect) its variant against exact attention.
void showSide(FigureView* view, ViewKind kind, const ForwardResult* result, const ViewState& state,
              const QString& name, bool mapReady) {
    if (kind != ViewKind::VariantEffect && !mapReady)
        return view->setFigure(render::EmptyFigure{
            name + QStringLiteral(" · ") +
            streamedWaitNote(ViewKind::Heatmap, *result, clampedTo(*result, state))});
    if (kind != ViewKind::VariantEffect || !result || result->tokenCount() == 0)
        return view->setFigure(scenarioFigure(result, state, name));
    const ViewState clamped = clampedTo(*result, state);
    render::PanelsFigure panels = buildPanels(kind, result, clamped);
    panels.title = name + QStringLiteral(" · ") + panels.title;
    view->setPanels(std::move(panels), buildFigure(kind, result, clamped));
}
} // namespace

render::Figure differenceFigure(const ForwardResult& a, const ForwardResult& b,
                                const ViewState& state) {
    if (a.tokens != b.tokens)
        return render::EmptyFigure{
            QStringLiteral(
                "A − B needs the same tokens: A has %1, B has %2 (different tokenizers?)")
                .arg(a.tokenCount())
                .arg(b.tokenCount())};
    const ViewState sa = clampedTo(a, state), sb = clampedTo(b, state);
    const auto pick = [](const ForwardResult& r, const ViewState& s) {
        return s.averageHeads ? layerMeanAttention(r, s.layer) : headAttention(r, s.layer, s.head);
    };
    std::vector<float> values = pick(a, sa);
    const std::vector<float> other = pick(b, sb);
    float extent = 1e-6f;
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] -= other[i];
        extent = std::max(extent, std::abs(values[i]));
    }
    render::Figure figure = buildFigure(ViewKind::Heatmap, &a, sa);
    auto& heatmap = std::get<render::HeatmapFigure>(figure);
    heatmap.values = std::move(values);
    heatmap.title = QStringLiteral("A − B · layer %1 · %2")
                        .arg(sa.layer)
                        .arg(sa.averageHeads ? QStringLiteral("mean of heads")
                                             : QStringLiteral("head %1").arg(sa.head));
    heatmap.colorBar = {render::Colormap::Diverging, -extent, extent,
                        QStringLiteral("A − B attention")};
    return figure;
}

CompareDock::CompareDock(Workspace* workspace, QWidget* parent)
    : QDockWidget(tr("Compare A | B"), parent)
    , workspace_(workspace)
    , runnerB_(new ForwardRunner(this))
    , sessionB_(new ModelSession(this))
    , loaderB_(new StreamedViewLoader(this)) {
    setObjectName(QStringLiteral("compareDock"));
    auto* body = new QWidget(this);
    auto* layout = new QVBoxLayout(body);
    layout->addWidget(createControls());
    auto* figures = new QSplitter(Qt::Horizontal, body);
    viewA_ = new FigureView(figures);
    viewB_ = new FigureView(figures);
    difference_ = new FigureView(figures);
    for (FigureView* view : {viewA_, viewB_, difference_}) {
        view->setMinimumSize(260, 240);
        connect(view, &FigureView::heatmapRowClicked, workspace_, &Workspace::selectQuery);
        connect(view, &FigureView::readoutChanged, workspace_, &Workspace::readoutChanged);
    }
    layout->addWidget(figures, 1);
    setWidget(body);
    // Why figureUpdated: A's map of a long pass is built on the workspace's loader, whose end
    // redraws the workspace, and a selection whose map is still being built shows so here too.
    connect(workspace_, &Workspace::figureUpdated, this, &CompareDock::refresh);
    connect(loaderB_, &StreamedViewLoader::ready, this, &CompareDock::refresh);
    connect(workspace_, &Workspace::modelChanged, this, &CompareDock::runB);
    connect(workspace_->textEdit(), &QPlainTextEdit::textChanged, this, [this] {
        if (isVisible()) runnerB_->schedule(workspace_->text());
    });
    connect(runnerB_, &ForwardRunner::finished, this, &CompareDock::onResultB);
    connect(runnerB_, &ForwardRunner::failed, this,
            [this](const QString& reason) { status_->setText(tr("B: %1").arg(reason)); });
    connect(sessionB_, &ModelSession::loaded, this, &CompareDock::onModelBLoaded);
    connect(sessionB_, &ModelSession::failed, this,
            [this](const QString& folder, const QString& why) {
                status_->setText(tr("B: cannot open %1: %2").arg(folder, why));
            });
    connect(this, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown) runB();
    });
}

QWidget* CompareDock::createControls() {
    auto* controls = new QWidget(this);
    auto* row = new QHBoxLayout(controls);
    row->setContentsMargins(0, 0, 0, 0);
    modelBox_ = new QComboBox(controls);
    modelBox_->setObjectName(QStringLiteral("compareModel"));
    variantBox_ = new QComboBox(controls);
    variantBox_->setObjectName(QStringLiteral("compareVariant"));
    status_ = new QLabel(controls);
    row->addWidget(new QLabel(tr("B: model"), controls));
    row->addWidget(modelBox_);
    row->addWidget(new QLabel(tr("variant"), controls));
    row->addWidget(variantBox_, 1);
    row->addWidget(status_, 2);
    fillModels();
    fillVariants();
    connect(modelBox_, &QComboBox::activated, this, &CompareDock::onModelPicked);
    connect(variantBox_, &QComboBox::activated, this, &CompareDock::onVariantPicked);
    return controls;
}

// The zoo's models by name, then "Open checkpoint folder…".
void CompareDock::fillModels() {
    modelBox_->addItem(tr("same as A"), QString());
    if (const std::optional<QString> resources = resourcesFolder()) {
        const QDir zoo(*resources + QStringLiteral("/models"));
        for (const QString& name : zoo.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            if (QFileInfo::exists(zoo.filePath(name + QStringLiteral("/config.json"))))
                modelBox_->addItem(tr("zoo: %1").arg(name), zoo.filePath(name));
    }
    modelBox_->addItem(tr("Open checkpoint folder…"), QStringLiteral("?"));
}

// "As trained" and every catalogue option whose usage is a complete spec, then "Spec file…".
void CompareDock::fillVariants() {
    variantBox_->addItem(tr("as trained (vanilla)"), QJsonObject());
    for (const variants::CatalogueEntry& entry : variants::catalogue()) {
        if (entry.needs == variants::Needs::Weights) continue;
        try {
            variants::parseVariantSpec(entry.usage);
        } catch (const std::exception&) {
            continue; // a usage with placeholders (a mixing matrix "…") is not a ready spec
        }
        const QJsonObject spec = QJsonDocument::fromJson(entry.usage).object();
        variantBox_->addItem(
            QStringLiteral("%1 · %2").arg(entry.item).arg(QString::fromUtf8(entry.name)), spec);
    }
    variantBox_->addItem(tr("Spec file…"), QStringLiteral("?"));
}

void CompareDock::onVariantPicked(int index) {
    const QVariant data = variantBox_->itemData(index);
    if (data.typeId() != QMetaType::QString) {
        setVariantB(data.toJsonObject());
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Variant spec for B"), QString(),
                                                      tr("Variant spec (*.json)"));
    if (path.isEmpty()) return;
    try {
        VariantFile variant = loadVariantFile(path);
        runnerB_->setVariant(std::move(variant.spec));
        variantB_ = variant.json;
        status_->setText(tr("B: variant %1").arg(QFileInfo(path).fileName()));
    } catch (const std::exception& error) {
        status_->setText(tr("B: %1").arg(QString::fromUtf8(error.what())));
    }
}

void CompareDock::setVariantB(const QJsonObject& spec) {
    try {
        runnerB_->setVariant(io::parseScenarioVariant(spec));
        variantB_ = spec;
        status_->clear();
    } catch (const std::exception& error) {
        status_->setText(tr("B: %1").arg(QString::fromUtf8(error.what())));
    }
}

void CompareDock::onModelPicked(int index) {
    QString folder = modelBox_->itemData(index).toString();
    if (folder == QLatin1String("?")) {
        folder = QFileDialog::getExistingDirectory(this, tr("Checkpoint folder for B"));
        if (folder.isEmpty()) return;
    }
    setModelB(folder);
}

void CompareDock::setModelB(const QString& folder) {
    chosenFolder_ = folder.isEmpty() ? QString() : QFileInfo(folder).absoluteFilePath();
    runB();
}

io::Scenario CompareDock::scenarioB() const {
    io::Scenario scenario = workspace_->scenario();
    if (!chosenFolder_.isEmpty()) scenario.model = sceneModelName(chosenFolder_);
    scenario.variant = variantB_;
    scenario.view = viewId(ViewKind::Heatmap).toStdString();
    return scenario;
}

QString CompareDock::folderB() const {
    if (!chosenFolder_.isEmpty()) return chosenFolder_;
    const std::shared_ptr<const LoadedModel> a = workspace_->sharedModel();
    return a ? a->folder : QString();
}

void CompareDock::onModelBLoaded() {
    runnerB_->setModel(sessionB_->shared());
    status_->setText(tr("B: %1").arg(QFileInfo(sessionB_->current()->folder).fileName()));
    runB();
}

void CompareDock::runB() {
    const QString folder = folderB();
    if (!isVisible() || folder.isEmpty()) return;
    const LoadedModel* loaded = sessionB_->current();
    if (!loaded || loaded->folder != folder) {
        if (sessionB_->busy()) return; // onModelBLoaded runs B again, with the newest wish
        status_->setText(tr("B: loading %1…").arg(QFileInfo(folder).fileName()));
        const std::shared_ptr<const LoadedModel> a = workspace_->sharedModel();
        std::optional<BackendKind> kind;
        if (a) kind = a->backend->kind();
        sessionB_->load(folder, chooseBackend(kind), {});
        return;
    }
    runnerB_->runNow(workspace_->text());
}

void CompareDock::onResultB(std::shared_ptr<const ForwardResult> result) {
    resultB_ = std::move(result);
    refresh();
    Q_EMIT resultBShown();
}

ViewKind CompareDock::sideView() const {
    return workspace_->view() == ViewKind::VariantEffect ? ViewKind::VariantEffect
                                                         : ViewKind::Heatmap;
}

void CompareDock::refresh() {
    if (!isVisible()) return;
    const ViewKind kind = sideView();
    // Why here: B's second (exact) pass and its lens cost as much again, so only while shown.
    runnerB_->setExtras(viewRow(kind).needs);
    const ViewState& state = workspace_->state();
    const ForwardResult* a = workspace_->result();
    // A long pass's maps (the heatmaps' and A − B's) are built off the GUI thread first, one at
    // a time per pass: when a build ends, the newest selection's map is built next (a stale one
    // is kept, not drawn), and one that ends while the dock is hidden draws nothing.
    const bool readyA = workspace_->ensureDrawable(ViewKind::Heatmap, state);
    const bool readyB = !resultB_ || !resultB_->streamed ||
                        loaderB_->ensure(ViewKind::Heatmap, resultB_, clampedTo(*resultB_, state));
    showSide(viewA_, kind, a, state, tr("A"), readyA);
    showSide(viewB_, kind, resultB_.get(), state, tr("B"), readyB);
    if (!a || !resultB_ || a->tokenCount() == 0 || resultB_->tokenCount() == 0)
        difference_->setFigure(render::EmptyFigure{tr("A − B appears when both have run.")});
    else if (!readyA || !readyB)
        difference_->setFigure(
            render::EmptyFigure{tr("A − B follows once A's and B's maps are built…")});
    else
        difference_->setFigure(differenceFigure(*a, *resultB_, state));
}
} // namespace headlight::app
