#pragma once
// Headlight's main window: menu bar, the workspace (text box, token strip, attention views and
// the Vulkan canvas as its last tab), and a status bar that names the compute device and backend
// (and why that backend was chosen). Window geometry and recent folders and Hugging Face cache ids
// persist in QSettings.

#include "backend/backend_choice.h"
#include "canvas/canvas_window.h"
#include "command_palette.h"
#include "model_session.h"
#include "workspace.h"

#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>
#include <memory>
#include <optional>

class QLabel;
class QActionGroup;
class QDockWidget;
class QMenu;
class QProgressBar;
class QVulkanInstance;

namespace headlight::app {

class AtlasCanvas;
class CompareDock;
class CorpusRunner;
class FeatureScanRunner;
class HeadRolesDock;
class PatchingDialog;
class TrainingScrubber;
class VariantDock;

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
    ModelSession& session() { return *session_; }
    QMessageBox* errorDialog() const { return errorDialog_; } // the last error shown, if any
    render::CanvasWindow* canvas() const { return canvas_; }  // nullptr when Vulkan cannot draw
    QString canvasProblem() const { return canvasProblem_; }
    AtlasCanvas* atlasCanvas() const { return atlasCanvas_; } // nullptr without the canvas
    Workspace* workspace() const { return workspace_; }
    VariantDock* variantDock() const { return variantDock_; }
    CompareDock* compareDock() const { return compare_; }
    CorpusRunner* corpusRunner() const { return corpus_; }
    FeatureScanRunner* featureScanRunner() const { return featureScans_; }
    TrainingScrubber* trainingScrubber() const { return scrubber_; }
    HeadRolesDock* headRolesDock() const { return headRoles_; }
    // View ▸ Activation patching… (Ctrl+Shift+P): the dialog, made on first use.
    PatchingDialog* patchingDialog();
    // Ctrl+K: the palette over every menu command and zoo model (main_window_palette.cpp).
    void showPalette();
    std::vector<PaletteEntry> paletteEntries();
    // A non-modal error dialog (errorDialog() returns it): a title, one line and the detail.
    void showError(const QString& title, const QString& line, const QString& detail);

    // Where a layer above the window (app/classroom) plugs in without the window knowing it: a
    // dock tabbed with the variant dock on the right (placed as the last session left it), and
    // entries at the end of the File menu's file section and after View ▸ Compare.
    void addPanelDock(QDockWidget* dock);
    void addFileActions(const QList<QAction*>& actions);
    void addViewActions(const QList<QAction*>& actions);

Q_SIGNALS:
    // A .json file dropped on the window: a scene or lesson, for the classroom above to open.
    void documentDropped(const QString& path);

public Q_SLOTS:
    void setBackend(std::optional<BackendKind> forced);
    // Loads on a worker thread: a checkpoint folder, or a Hugging Face cache snapshot,
    // models--ORG--NAME folder or ORG/NAME id (io::resolveModel).
    void openCheckpoint(const QString& folder);
    // File ▸ Open text file… (Ctrl+Shift+T): a UTF-8 text file becomes the input, shown in the
    // Atlas, which takes texts of any length. False after the error dialog said why not.
    bool openTextFile(const QString& path);
    // File ▸ Open SAE… (Ctrl+Shift+E): attaches an SAE folder to the Features view and the
    // feature editor, and shows that view. False after the error dialog said why not.
    bool openSae(const QString& folder);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void chooseCheckpoint();
    void chooseZooModel(); // File ▸ Open zoo model…
    void openZooModel(const QString& folder, const QString& exampleText);
    void chooseCachedModel(); // File ▸ Open from Hugging Face cache…
    void chooseTextFile();
    void chooseSae(); // the zoo's SAE for a zoo model, or a folder
    void onModelLoaded(const QString& summary);
    void onModelFailed(const QString& folder, const QString& reason);
    void rememberRecent(const QString& source); // a folder or a cache id
    void rebuildRecentMenu();
    void createMenus();
    void createViewMenu();
    void createVariantMenus(QMenu* file);
    QWidget* createCanvas(); // the canvas, or a label saying why there is none
    void showAbout();
    void showAttentionNote();
    void refreshStatus();
    void updateCanvas(); // the canvas shows the selected head (or the Atlas) while its tab is open

    LaunchOptions options_;
    BackendChoice backend_;
    std::unique_ptr<QVulkanInstance> vulkan_;
    QPointer<render::CanvasWindow> canvas_;
    AtlasCanvas* atlasCanvas_ = nullptr; // the Atlas tab's atlas on the canvas; null without it
    QString canvasProblem_;
    QLabel* computeLabel_ = nullptr;
    QLabel* modelLabel_ = nullptr;
    QProgressBar* loadProgress_ = nullptr;
    QActionGroup* backendGroup_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    ModelSession* session_ = nullptr;
    Workspace* workspace_ = nullptr;
    VariantDock* variantDock_ = nullptr;
    CompareDock* compare_ = nullptr;
    CorpusRunner* corpus_ = nullptr;
    FeatureScanRunner* featureScans_ = nullptr;
    PatchingDialog* patching_ = nullptr;
    TrainingScrubber* scrubber_ = nullptr;
    HeadRolesDock* headRoles_ = nullptr;
    QMenu* fileMenu_ = nullptr;
    QAction* paletteAction_ = nullptr;
    QAction* fileSlot_ = nullptr; // plug-in entries go before it (the separator above Quit)
    QMenu* viewMenu_ = nullptr;
    QAction* viewSlot_ = nullptr; // plug-in entries go before it
    QPointer<QMessageBox> errorDialog_;
};
} // namespace headlight::app
