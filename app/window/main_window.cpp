#include "main_window.h"

#include "about_info.h"
#include "atlas_canvas.h"
#include "atlas_page.h"
#include "backend/cpu/cpu_gemm.h"
#include "canvas/canvas_window.h"
#include "canvas_maps.h"
#include "compare_dock.h"
#include "corpus_runner.h"
#include "default_model.h"
#include "export_actions.h"
#include "feature_scan_runner.h"
#include "head_roles_dock.h"
#include "hub_cache_dialog.h"
#include "knn_datastore_builder.h"
#include "patching_dialog.h"
#include "steering_editor.h"
#include "training_scrubber.h"
#include "variant_dock.h"
#include "variant_panel.h"
#include "window_size.h"
#include "zoo_dialog.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QStringDecoder>
#include <QVersionNumber>
#include <QVulkanInstance>

namespace headlight::app {
namespace {

// The library the CPU backend's GEMMs run on ("OpenBLAS" or "Eigen"), as the Compute menu and
// the status bar name it.
QString cpuGemmName() {
    return QString::fromStdString(cpu::gemmLibrary()).section(QLatin1Char(' '), 0, 0);
}
} // namespace

MainWindow::MainWindow(const LaunchOptions& options, QWidget* parent)
    : QMainWindow(parent)
    , options_(options) {
    setWindowTitle(tr("Headlight"));
    resize(defaultWindowSize(QGuiApplication::primaryScreen()));
    setAcceptDrops(true);
    session_ = new ModelSession(this);
    connect(session_, &ModelSession::loaded, this, &MainWindow::onModelLoaded);
    connect(session_, &ModelSession::failed, this, &MainWindow::onModelFailed);
    modelLabel_ = new QLabel(tr("No model: File ▸ Open checkpoint folder… (Ctrl+O)"), this);
    statusBar()->addWidget(modelLabel_, 1);
    loadProgress_ = new QProgressBar(this);
    loadProgress_->setRange(0, 0); // busy indicator: loading has no meaningful fraction
    loadProgress_->setMaximumWidth(160);
    loadProgress_->hide();
    statusBar()->addPermanentWidget(loadProgress_);
    computeLabel_ = new QLabel(this);
    statusBar()->addPermanentWidget(computeLabel_);
    workspace_ = new Workspace(createCanvas(), this);
    setCentralWidget(workspace_);
    connect(workspace_, &Workspace::message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 4000); });
    connect(workspace_, &Workspace::memoryRefused, this, [this](const QString& reason) {
        showError(tr("Not enough memory"),
                  tr("Headlight did not run this pass: it would not fit in memory."), reason);
    });
    connect(workspace_, &Workspace::atlasFailed, this, [this](const QString& reason) {
        showError(tr("No atlas"), tr("Headlight did not draw the atlas of this text."), reason);
    });
    connect(workspace_, &Workspace::readoutChanged, this, [this](const QString& text) {
        if (text.isEmpty())
            statusBar()->clearMessage();
        else
            statusBar()->showMessage(text);
    });
    if (canvas_) {
        atlasCanvas_ = new AtlasCanvas(canvas_, workspace_->atlasPage(), this);
        connect(workspace_, &Workspace::refreshed, this, &MainWindow::updateCanvas);
        // Why not on the atlas: its rows are the long text's tokens, not the views' pass's.
        connect(canvas_, &render::CanvasWindow::querySelected, this, [this](int row) {
            if (!canvas_->showsAtlas()) workspace_->selectQuery(row);
        });
    }
    variantDock_ = new VariantDock(workspace_, this);
    addDockWidget(Qt::RightDockWidgetArea, variantDock_);
    compare_ = new CompareDock(workspace_, this);
    addDockWidget(Qt::BottomDockWidgetArea, compare_);
    compare_->hide();
    corpus_ = new CorpusRunner(workspace_, this);
    workspace_->restoreSettings();
    createMenus();
    setBackend(options.backend);
    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    // Why after restoreState: it is shown only while the open model is part of a series.
    scrubber_ = new TrainingScrubber(this);
    headRoles_ = new HeadRolesDock(this);
}

MainWindow::~MainWindow() {
    // Why: the canvas window must go before the QVulkanInstance it renders with.
    delete centralWidget();
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    fileMenu_ = file;
    QAction* open =
        file->addAction(tr("&Open checkpoint folder…"), this, &MainWindow::chooseCheckpoint);
    open->setShortcut(QKeySequence::Open);
    QAction* zoo = file->addAction(tr("Open &zoo model…"), this, &MainWindow::chooseZooModel);
    zoo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addAction(tr("Open from &Hugging Face cache…"), this, &MainWindow::chooseCachedModel);
    QAction* textFile = file->addAction(tr("Open &text file…"), this, &MainWindow::chooseTextFile);
    textFile->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    QAction* sae = file->addAction(tr("Open &SAE…"), this, &MainWindow::chooseSae);
    sae->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    sae->setStatusTip(tr("Attach a sparse autoencoder: the Features view reads its features, "
                         "the variant dock edits them"));
    featureScans_ = new FeatureScanRunner(workspace_, this);
    file->addAction(featureScans_->scanAction());
    file->addAction(featureScans_->openScanAction());
    file->addAction(featureScans_->openLabelsAction());
    connect(featureScans_, &FeatureScanRunner::finished, this,
            [this](bool attached, bool fromDisk) {
                if (attached)
                    statusBar()->showMessage(fromDisk ? tr("Feature scan read from the kept file")
                                                      : tr("Feature scan finished"),
                                             5000);
            });
    recentMenu_ = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addSeparator();
    auto* exports = new ExportActions(this);
    file->addAction(exports->figureAction());
    file->addAction(exports->dataAction());
    file->addSeparator();
    createVariantMenus(file);
    fileSlot_ = file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* compute = menuBar()->addMenu(tr("&Compute"));
    backendGroup_ = new QActionGroup(this);
    const struct {
        QString label;
        std::optional<BackendKind> kind;
    } entries[] = {{tr("&Automatic"), std::nullopt},
                   {tr("&CPU (%1)").arg(cpuGemmName()), BackendKind::Cpu},
                   {tr("&Vulkan compute"), BackendKind::Vulkan}};
    for (const auto& entry : entries) {
        QAction* action = compute->addAction(entry.label);
        action->setCheckable(true);
        action->setChecked(entry.kind == options_.backend);
        backendGroup_->addAction(action);
        connect(action, &QAction::triggered, this, [this, kind = entry.kind] { setBackend(kind); });
    }

    createViewMenu();
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("Attention is &not explanation…"), this, &MainWindow::showAttentionNote);
    help->addAction(tr("&About Headlight"), this, &MainWindow::showAbout);
}

// File ▸ Save variant spec…, Make and Open steering vector…, Open corpus… and Build kNN
// datastore…, the Edit menu's variant undo/redo.
void MainWindow::createVariantMenus(QMenu* file) {
    file->addAction(variantDock_->saveAction());
    file->addAction(variantDock_->steeringEditor()->makeAction());
    file->addAction(variantDock_->steeringEditor()->openAction());
    auto* knn = new KnnDatastoreBuilder(workspace_, this);
    file->addAction(knn->buildAction());
    file->addAction(corpus_->openAction());
    // A built datastore runs at once: the variant reads it, and the kNN-LM view shows it.
    connect(knn, &KnnDatastoreBuilder::finished, this, [this](bool built, const QString& path) {
        if (!built) return;
        variantDock_->apply(withKnnDatastore(variantDock_->panel()->spec(), path));
        workspace_->setView(ViewKind::KnnNeighbours);
    });
    file->addSeparator();
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(variantDock_->undoAction());
    edit->addAction(variantDock_->redoAction());
}

void MainWindow::chooseSae() {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    const QString zoo = model ? zooSaeFor(model->folder) : QString();
    if (!zoo.isEmpty()) {
        QMessageBox ask(QMessageBox::Question, tr("Open SAE"),
                        tr("The zoo ships an SAE trained on %1 (%2).")
                            .arg(model->name(), QDir::toNativeSeparators(zoo)),
                        QMessageBox::Cancel, this);
        QPushButton* useZoo = ask.addButton(tr("Open the zoo's SAE"), QMessageBox::AcceptRole);
        QPushButton* other = ask.addButton(tr("Another folder…"), QMessageBox::ActionRole);
        ask.setDefaultButton(useZoo);
        ask.exec();
        if (ask.clickedButton() == useZoo) {
            openSae(zoo);
            return;
        }
        if (ask.clickedButton() != other) return;
    }
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("Open SAE folder (cfg.json and sae_weights.safetensors, or Gemma/Llama Scope)"));
    if (!folder.isEmpty()) openSae(folder);
}

bool MainWindow::openSae(const QString& folder) {
    QString why;
    if (!workspace_->attachSaeFolder(folder, &why)) {
        showError(tr("Cannot open the SAE"), tr("Headlight cannot read %1.").arg(folder), why);
        return false;
    }
    workspace_->setView(ViewKind::Features);
    statusBar()->showMessage(tr("SAE %1 attached").arg(workspace_->sae()->name()), 5000);
    return true;
}

PatchingDialog* MainWindow::patchingDialog() {
    if (!patching_) patching_ = new PatchingDialog(workspace_, this);
    return patching_;
}

void MainWindow::createViewMenu() {
    QMenu* view = menuBar()->addMenu(tr("&View"));
    viewMenu_ = view;
    paletteAction_ = view->addAction(tr("&Find a view, lesson, model or command…"), this,
                                     &MainWindow::showPalette);
    paletteAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    view->addSeparator();
    view->addActions(workspace_->viewActions());
    view->addSeparator();
    view->addActions(workspace_->navigationActions());
    view->addSeparator();
    view->addAction(variantDock_->toggleViewAction());
    QAction* compare = compare_->toggleViewAction();
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    view->addAction(compare);
    viewSlot_ = corpus_->clearAction();
    view->addAction(viewSlot_);
    QAction* patching = view->addAction(tr("Activation &patching…"), this, [this] {
        patchingDialog()->show();
        patching_->raise();
    });
    patching->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    view->addSeparator();
    QMenu* colors = view->addMenu(tr("&Colour map"));
    auto* group = new QActionGroup(this);
    for (const render::Colormap map : {render::Colormap::Viridis, render::Colormap::Cividis}) {
        QAction* action = colors->addAction(render::colormapName(map));
        action->setCheckable(true);
        action->setChecked(workspace_->state().colormap == map);
        group->addAction(action);
        connect(action, &QAction::triggered, workspace_,
                [this, map] { workspace_->setColormap(map); });
    }
}

void MainWindow::addPanelDock(QDockWidget* dock) {
    addDockWidget(Qt::RightDockWidgetArea, dock);
    tabifyDockWidget(variantDock_, dock);
    variantDock_->raise();
    // Why: restoreState() ran in the constructor, before this dock existed.
    restoreDockWidget(dock);
}

void MainWindow::addFileActions(const QList<QAction*>& actions) {
    fileMenu_->insertActions(fileSlot_, actions);
}

void MainWindow::addViewActions(const QList<QAction*>& actions) {
    viewMenu_->insertActions(viewSlot_, actions);
}

QWidget* MainWindow::createCanvas() {
    vulkan_ = std::make_unique<QVulkanInstance>();
    // Why 1.2: the canvas's shaders are SPIR-V 1.5 (glslc --target-env=vulkan1.2).
    vulkan_->setApiVersion(QVersionNumber(1, 2));
#ifndef NDEBUG
    vulkan_->setLayers({"VK_LAYER_KHRONOS_validation"});
#endif
    if (!vulkan_->create()) {
        canvasProblem_ =
            tr("The Vulkan canvas is unavailable (%1). Figures are drawn without it.")
                .arg(vulkan_->errorCode() ? QStringLiteral("VkResult %1").arg(vulkan_->errorCode())
                                          : tr("no Vulkan surface on this display"));
        auto* label = new QLabel(canvasProblem_, this);
        label->setAlignment(Qt::AlignCenter);
        label->setWordWrap(true);
        return label;
    }
    canvas_ = new render::CanvasWindow;
    canvas_->setVulkanInstance(vulkan_.get());
    return QWidget::createWindowContainer(canvas_, this);
}

void MainWindow::setBackend(std::optional<BackendKind> forced) {
    backend_ = chooseBackend(forced, options_.vulkanDevice);
    refreshStatus();
}

void MainWindow::refreshStatus() {
    const QString device =
        backend_.device ? QString::fromStdString(backend_.device->name) : tr("none");
    const QString shortDevice = device.section(" (", 0, 0);
    const QString backend =
        backend_.kind == BackendKind::Vulkan ? tr("Vulkan") : tr("CPU (%1)").arg(cpuGemmName());
    computeLabel_->setText(tr("%1 backend · Vulkan device: %2").arg(backend, shortDevice));
    computeLabel_->setToolTip(QString::fromStdString(backend_.reason));
    if (!canvas_) return;
    QStringList hud{tr("Compute: %1").arg(device),
                    tr("Backend: %1").arg(QString::fromLatin1(backendName(backend_.kind)))};
    if (const ForwardResult* result = workspace_->result(); result && result->tokenCount() > 0)
        hud << tr("Forward pass: %1 ms for %2 tokens")
                   .arg(result->forwardMs, 0, 'f', 1)
                   .arg(result->tokenCount());
    canvas_->setHudLines(hud);
}

void MainWindow::updateCanvas() {
    if (!workspace_->canvasShown()) return;
    if (workspace_->canvasShowsAtlas() && atlasCanvas_->show()) return;
    canvas_->setMap(canvasMap(workspace_->result(), workspace_->state()));
    refreshStatus();
}

void MainWindow::chooseZooModel() {
    const std::optional<QString> resources = resourcesFolder();
    if (!resources) {
        showError(tr("No zoo"), tr("Headlight cannot find its resources folder."),
                  tr("Set HEADLIGHT_RESOURCES to the folder that holds models/."));
        return;
    }
    auto* dialog = new ZooDialog(*resources + QStringLiteral("/models"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ZooDialog::modelChosen, this, &MainWindow::openZooModel);
    dialog->open();
}

void MainWindow::openZooModel(const QString& folder, const QString& exampleText) {
    if (!exampleText.isEmpty()) workspace_->setText(exampleText);
    openCheckpoint(folder);
}

void MainWindow::chooseCachedModel() {
    auto* dialog = new HubCacheDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &HubCacheDialog::modelChosen, this, &MainWindow::openCheckpoint);
    dialog->open();
}

void MainWindow::chooseTextFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open text file"), QString(),
                                                      tr("Text files (*.txt *.md);;All files (*)"));
    if (!path.isEmpty()) openTextFile(path);
}

bool MainWindow::openTextFile(const QString& path) {
    // Why a ceiling: 8 MB of text is far past any model's 32,768 tokens, and the text box holds it.
    constexpr qint64 kMaxBytes = 8 << 20;
    QFile file(path);
    QString problem;
    if (!file.open(QIODevice::ReadOnly))
        problem = file.errorString();
    else if (file.size() > kMaxBytes)
        problem = tr("the file has %1 MB; the Atlas reads at most 8 MB of text")
                      .arg(double(file.size()) / 1e6, 0, 'f', 1);
    const QByteArray bytes = problem.isEmpty() ? file.readAll() : QByteArray();
    QStringDecoder utf8(QStringDecoder::Utf8);
    const QString text = utf8.decode(bytes);
    if (problem.isEmpty() && utf8.hasError()) problem = tr("the file is not UTF-8 text");
    if (!problem.isEmpty()) {
        showError(tr("Cannot open the text"),
                  tr("Headlight cannot read %1.").arg(QDir::toNativeSeparators(path)), problem);
        return false;
    }
    workspace_->showAtlas();
    workspace_->setText(text);
    return true;
}

void MainWindow::chooseCheckpoint() {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Open checkpoint folder"));
    if (!folder.isEmpty()) openCheckpoint(folder);
}

void MainWindow::openCheckpoint(const QString& path) {
    // Why: a path that does not exist may be a Hugging Face cache id (ORG/NAME), kept as written.
    const QString source = QFileInfo::exists(path) ? QFileInfo(path).absoluteFilePath() : path;
    modelLabel_->setText(tr("Loading %1…").arg(QDir::toNativeSeparators(source)));
    loadProgress_->show();
    session_->load(source, backend_, options_.vulkanDevice);
}

void MainWindow::onModelLoaded(const QString& summary) {
    loadProgress_->hide();
    const LoadedModel* model = session_->current();
    rememberRecent(model->source);
    QString text = model->name() + "  ·  " + summary;
    if (!model->tokenizer) text += tr("  ·  no tokenizer files: ids only");
    if (!model->backendNote.isEmpty()) text += "  ·  " + model->backendNote;
    modelLabel_->setText(text);
    setWindowTitle(tr("Headlight — %1").arg(model->name()));
    workspace_->setModel(session_->shared());
}

void MainWindow::onModelFailed(const QString& folder, const QString& reason) {
    loadProgress_->hide();
    const LoadedModel* previous = session_->current();
    modelLabel_->setText(previous ? previous->name() + "  ·  " + previous->summary()
                                  : tr("No model: File ▸ Open checkpoint folder… (Ctrl+O)"));
    showError(tr("Cannot open checkpoint"),
              tr("Headlight cannot open %1.").arg(QDir::toNativeSeparators(folder)), reason);
}

void MainWindow::showError(const QString& title, const QString& line, const QString& detail) {
    // Why non-modal open(): the window keeps working, and tests can read the dialog.
    errorDialog_ = new QMessageBox(QMessageBox::Critical, title, line, QMessageBox::Ok, this);
    errorDialog_->setInformativeText(detail);
    errorDialog_->setAttribute(Qt::WA_DeleteOnClose);
    errorDialog_->open();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    workspace_->saveSettings();
    QMainWindow::closeEvent(event);
}

void MainWindow::rememberRecent(const QString& source) {
    QSettings settings;
    QStringList recent = settings.value("recentFolders").toStringList();
    recent.removeAll(source);
    recent.prepend(source);
    settings.setValue("recentFolders", recent.mid(0, 8));
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = QSettings().value("recentFolders").toStringList();
    for (const QString& folder : recent)
        recentMenu_->addAction(QDir::toNativeSeparators(folder), this,
                               [this, folder] { openCheckpoint(folder); });
    recentMenu_->setEnabled(!recent.isEmpty());
}

// A checkpoint folder opens as a model; a .json file as a scene or lesson (docs/scenes.md).
void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1) return;
    const QFileInfo dropped(urls.first().toLocalFile());
    if (dropped.isDir() ||
        (dropped.isFile() && dropped.suffix().compare("json", Qt::CaseInsensitive) == 0))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = event->mimeData()->urls().first().toLocalFile();
    if (QFileInfo(path).isDir())
        openCheckpoint(path);
    else
        Q_EMIT documentDropped(path);
}

void MainWindow::showAbout() {
    QStringList lines;
    for (const QString& line : aboutLines(backend_))
        lines << line.toHtmlEscaped();
    // Why not QMessageBox::about: that one is modal and blocks; this one lets tests read it.
    auto* about = new QMessageBox(QMessageBox::Information, tr("About Headlight"),
                                  tr("<b>Headlight</b><p>Runs real forward passes of Transformer "
                                     "variants and shows what happens inside them.</p><p>%1</p>")
                                      .arg(lines.join(QStringLiteral("<br>"))),
                                  QMessageBox::Ok, this);
    about->setObjectName(QStringLiteral("aboutDialog"));
    about->setTextInteractionFlags(Qt::TextSelectableByMouse);
    about->setAttribute(Qt::WA_DeleteOnClose);
    about->open();
}

void MainWindow::showAttentionNote() {
    QMessageBox::information(
        this, tr("Attention is not explanation"),
        tr("<p>The views show attention weights: how much each token's representation draws on "
           "each other token inside one head. They are a real, measured part of the computation, "
           "but they are not an explanation of the model's output.</p>"
           "<p>Jain &amp; Wallace (2019, <i>Attention is not Explanation</i>) found that very "
           "different attention patterns can give the same prediction, and that attention often "
           "disagrees with other measures of which inputs matter. Wiegreffe &amp; Pinter (2019, "
           "<i>Attention is not not Explanation</i>) answered that attention can still carry "
           "useful information, but only tests against alternatives can show that it does.</p>"
           "<p>So read these pictures as <b>where information flows</b>, not <b>why</b> the model "
           "decided. Values, residual connections and the feed-forward layers also shape the "
           "result, and the rollout view is one approximation of their combined flow.</p>"));
}
} // namespace headlight::app
