#pragma once
// Headlight's main window: menu bar, the Vulkan canvas as the central view, and a status bar that
// names the compute device and backend (and why that backend was chosen).

#include <QMainWindow>
#include <QPointer>
#include <memory>
#include <optional>

#include "backend/backend_choice.h"
#include "canvas/canvas_window.h"

class QLabel;
class QActionGroup;
class QVulkanInstance;

namespace headlight::app {

struct LaunchOptions {
    std::optional<BackendKind> backend; // --backend
    std::string vulkanDevice;           // --vulkan-device
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const LaunchOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    const BackendChoice& backendChoice() const { return backend_; }
    render::CanvasWindow* canvas() const { return canvas_; } // nullptr when Vulkan cannot draw
    QString canvasProblem() const { return canvasProblem_; }

public Q_SLOTS:
    void setBackend(std::optional<BackendKind> forced);

private:
    void createMenus();
    void createCanvas();
    void showAbout();
    void refreshStatus();

    LaunchOptions options_;
    BackendChoice backend_;
    std::unique_ptr<QVulkanInstance> vulkan_;
    QPointer<render::CanvasWindow> canvas_;
    QString canvasProblem_;
    QLabel* computeLabel_ = nullptr;
    QActionGroup* backendGroup_ = nullptr;
};
} // namespace headlight::app
