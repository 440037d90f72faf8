#pragma once
// The workspace's Atlas tab: the atlas of the current text for the selected layer and head (or
// the layer's mean), for texts of any length the model takes. Above the map: the text's token
// count, the model's position limit, the pass's progress with Cancel, and mean or max pooling;
// beside it, the clicked query's strongest keys (double-click or Enter centres the view on that
// cell). The pass runs on AtlasRunner (app/session/atlas_runner.h); a refusal (a text past a
// learned position table, a pass that would not fit) is reported through failed(). "Open on
// canvas" (enabled once an atlas is drawn) asks for it on the Vulkan canvas (openOnCanvas).

#include "atlas_figure.h"
#include "atlas_runner.h"
#include "atlas_view.h"

#include <QWidget>

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
    // The atlas drawn, its text, layer and head; null before the first.
    const AtlasResult* result() const { return result_.get(); }

    // The figure `headlight export --view atlas --region` draws for the region in view, with its
    // caption and provenance set in `options`. Throws std::runtime_error without an atlas.
    render::HeatmapFigure regionFigure(render::ExportOptions& options,
                                       const QString& fileName) const;

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

    AtlasRunner* runner_;
    AtlasView* view_;
    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const AtlasResult> result_;
    QString requestedText_;
    int requestedLayer_ = -1, requestedHead_ = 0;
    QLabel* info_ = nullptr;
    QComboBox* pooling_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* canvasButton_ = nullptr;
    QLabel* queryLabel_ = nullptr;
    QListWidget* keys_ = nullptr;
};
} // namespace headlight::app
