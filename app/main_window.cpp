#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QVulkanInstance>

#include "canvas/canvas_window.h"

namespace headlight::app {

MainWindow::MainWindow(const LaunchOptions& options, QWidget* parent)
    : QMainWindow(parent), options_(options) {
    setWindowTitle(tr("Headlight"));
    resize(1280, 800);
    computeLabel_ = new QLabel(this);
    statusBar()->addPermanentWidget(computeLabel_);
    createMenus();
    createCanvas();
    setBackend(options.backend);
}

MainWindow::~MainWindow() {
    // Why: the canvas window must go before the QVulkanInstance it renders with.
    delete centralWidget();
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* compute = menuBar()->addMenu(tr("&Compute"));
    backendGroup_ = new QActionGroup(this);
    const struct {
        QString label;
        std::optional<BackendKind> kind;
    } entries[] = {{tr("&Automatic"), std::nullopt},
                   {tr("&CPU (Eigen)"), BackendKind::Cpu},
                   {tr("&Vulkan compute"), BackendKind::Vulkan}};
    for (const auto& entry : entries) {
        QAction* action = compute->addAction(entry.label);
        action->setCheckable(true);
        action->setChecked(entry.kind == options_.backend);
        backendGroup_->addAction(action);
        connect(action, &QAction::triggered, this, [this, kind = entry.kind] { setBackend(kind); });
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Headlight"), this, &MainWindow::showAbout);
}

void MainWindow::createCanvas() {
    vulkan_ = std::make_unique<QVulkanInstance>();
#ifndef NDEBUG
    vulkan_->setLayers({"VK_LAYER_KHRONOS_validation"});
#endif
    if (!vulkan_->create()) {
        canvasProblem_ = tr("The Vulkan canvas is unavailable (%1). Figures are drawn without it.")
                             .arg(vulkan_->errorCode() ? QStringLiteral("VkResult %1").arg(vulkan_->errorCode())
                                                       : tr("no Vulkan surface on this display"));
        auto* label = new QLabel(canvasProblem_, this);
        label->setAlignment(Qt::AlignCenter);
        label->setWordWrap(true);
        setCentralWidget(label);
        return;
    }
    canvas_ = new render::CanvasWindow;
    canvas_->setVulkanInstance(vulkan_.get());
    setCentralWidget(QWidget::createWindowContainer(canvas_, this));
}

void MainWindow::setBackend(std::optional<BackendKind> forced) {
    backend_ = chooseBackend(forced, options_.vulkanDevice);
    refreshStatus();
}

void MainWindow::refreshStatus() {
    const QString device = backend_.device ? QString::fromStdString(backend_.device->name) : tr("none");
    computeLabel_->setText(tr("Compute device: %1  ·  %2").arg(device, QString::fromStdString(backend_.reason)));
    if (canvas_)
        canvas_->setHudLines({tr("Compute: %1").arg(device),
                              tr("Backend: %1").arg(QString::fromLatin1(backendName(backend_.kind)))});
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Headlight"),
                       tr("<b>Headlight %1</b><p>Runs real forward passes of Transformer variants and "
                          "shows what happens inside them.</p>")
                           .arg(QApplication::applicationVersion()));
}
} // namespace headlight::app
