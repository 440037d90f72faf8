#pragma once
// The workspace's Atlas tab: the atlas of the current text for the selected layer and head (or
// the layer's mean), for texts of any length the model takes. Above the map: the text's token
// count, the model's position limit, the pass's progress with Cancel, and mean or max pooling;
// beside it, the clicked query's strongest keys (double-click or Enter centres the view on that
// cell). The pass runs on AtlasRunner (app/session/atlas_runner.h); a refusal (a text past a
// learned position table, a pass that would not fit, a variant the atlas cannot draw) is
// reported through failed() and in the tab. The atlas follows the variant panel's variant
// (setVariant): a sparse mask's, LSH's or a linearized kernel's own weights. "Mask outline"
// (Ctrl+Shift+M) paints the outline of the mask the map obeys and tells, beside the map, the
// share of the attention in view outside it, and per tile under the pointer.
// "Open on canvas" (enabled once an atlas is drawn) asks for it on the Vulkan canvas
// (openOnCanvas).

#include "atlas_figure.h"
#include "atlas_runner.h"
#include "atlas_view.h"

#include <QJsonObject>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace headlight::app {

class AtlasPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kStrongestKeys = 12;

    explicit AtlasPage(QWidget* parent = nullptr);

    void setModel(std::shared_ptr<const LoadedModel> model);
    // The variant the next show() draws: its JSON (as the variant panel builds it; empty for
    // none) and its spec.
    void setVariant(const QJsonObject& json, const variants::VariantSpec& spec);
    // Draws `head` (AttentionAtlas::kAllHeads for the mean) of `layer` for `text`, unless that is
    // what is drawn or running already.
    void show(const QString& text, int layer, int head);
    void setColormap(render::Colormap map);
    AtlasRunner& runner() { return *runner_; }
    AtlasView* view() const { return view_; }
    QListWidget* strongestKeys() const { return keys_; }
    QComboBox* poolingBox() const { return pooling_; }
    QLabel* infoLabel() const { return info_; }
    QPushButton* canvasButton() const { return canvasButton_; }
    QCheckBox* overlayBox() const { return overlay_; }
    // The mask overlay's share of the attention in view outside the mask; hidden without it.
    QLabel* maskLabel() const { return maskLabel_; }
    QLabel* readoutLabel() const { return readout_; } // the tile under the pointer
    // The atlas drawn, its text, layer and head; null before the first.
    const AtlasResult* result() const { return result_.get(); }

    // Writes the region in view to `path` (a figure format or .csv) as `headlight export --view
    // atlas --region` writes it, with the variant (its JSON written beside the file, as
    // NAME-variant.json, for the command's --variant) and the mask overlay when it is on; the
    // file's provenance records that command. Throws std::exception without an atlas.
    void exportRegion(const QString& path, render::ExportOptions options) const;

Q_SIGNALS:
    void failed(const QString& reason);
    void message(const QString& text);
    void openOnCanvas();

private:
    QWidget* createBar();
    void onFinished(std::shared_ptr<const AtlasResult> result);
    void onFailed(const QString& reason, int64_t tokens);
    void showStrongestKeys(int64_t query);
    void setInfo(int64_t tokens, const QString& detail);
    void showMaskShare();
    QStringList exportCommand(const QString& fileName, const QString& variantFile,
                              const render::ExportOptions& options) const;

    AtlasRunner* runner_;
    AtlasView* view_;
    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const AtlasResult> result_;
    QString requestedText_;
    QJsonObject variantJson_, requestedVariant_, shownVariant_;
    int requestedLayer_ = -1, requestedHead_ = 0;
    QLabel* info_ = nullptr;
    QComboBox* pooling_ = nullptr;
    QCheckBox* overlay_ = nullptr;
    QLabel* maskLabel_ = nullptr;
    QLabel* readout_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* canvasButton_ = nullptr;
    QLabel* queryLabel_ = nullptr;
    QListWidget* keys_ = nullptr;
};
} // namespace headlight::app
