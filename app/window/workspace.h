#pragma once
// The main window's workspace: the text box (each edit re-runs the forward pass, debounced, on a
// worker thread), the token strip, the view tabs, layer/head selection and the figure itself.
// It owns the selection (ViewState) and the latest ForwardResult; every change redraws the
// current figure from those two.
//
//   setModel             a newly loaded model: new layer/head ranges, and a pass on the text
//   setVariant           the variant spec (JSON, as the variant panel builds it): a pass at once
//   setSae/selectFeature the SAE the Features view reads, and the feature whose page it shows
//   scenario             what the workspace shows, as a Scenario (io/scenario.h)
//   showScenarioView     a scenario's view, colour map and selection (its query once its text ran)
//   selectHead/stepLayer/stepHead/selectQuery   the selection, from spin boxes, shortcuts, clicks
//   navigationActions    Alt+arrow layer/head stepping and Ctrl+digit view switching, for menus
//   showAtlas            the Atlas tab (after the canvas): the current text at any length, drawn
//                        by AtlasPage with its own pass; while it is shown the views' pass waits
//   showAtlasOnCanvas    the canvas tab drawing the Atlas tab's atlas (until another tab is shown)

#include "figure_builders.h"
#include "forward_runner.h"
#include "io/scenario.h"

#include <QJsonObject>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>

class QAction;
class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QScrollArea;
class QSlider;
class QSpinBox;
class QStackedWidget;

namespace headlight::app {

class AtlasPage;
class FigureView;
class StreamedViewLoader;
class TokenStrip;
class ViewBar;

class Workspace : public QWidget {
    Q_OBJECT
public:
    // `canvasPage` (the Vulkan canvas, or a label saying why there is none) becomes the last tab.
    explicit Workspace(QWidget* canvasPage, QWidget* parent = nullptr);

    void setModel(std::shared_ptr<const LoadedModel> model);
    void setText(const QString& text);
    QString text() const;
    // Throws nothing: a spec the engine refuses shows its reason under the text box.
    void setVariant(const QJsonObject& spec);
    const QJsonObject& variantJson() const { return variantJson_; }
    const variants::VariantSpec& variant() const { return runner_->variant(); }
    // Heads knocked out in every pass (the knockout grid, a scenario's ablation): a pass at once.
    void setKnockouts(const HeadKnockouts& knockouts);
    const HeadKnockouts& knockouts() const { return runner_->knockouts(); }
    // The SAE the Features view reads (null: none): a pass at once while that view is shown.
    void setSae(std::shared_ptr<const AttachedSae> sae);
    const std::shared_ptr<const AttachedSae>& sae() const { return runner_->sae(); }
    // Reads the SAE folder and attaches it; false with the one-line reason in `why` when it
    // cannot be read.
    bool attachSaeFolder(const QString& folder, QString* why = nullptr);
    std::shared_ptr<const LoadedModel> sharedModel() const { return model_; }
    // Entropy and JSD violins pooled over a corpus replace the current text's while set.
    void setCorpusStats(std::optional<CorpusStats> stats);
    const std::optional<CorpusStats>& corpusStats() const { return corpus_; }
    // The Training view's lines (the scrubber's) and the checkpoint its marker stands at.
    void setTraining(std::shared_ptr<const TrainingCurves> curves, int checkpoint);
    // The head-roles view's scores on generated probes (the head table's job); null: on the
    // text. A scenario records their probe set.
    void setProbeRoles(std::shared_ptr<const ProbeHeadRoles> roles);

    const ViewState& state() const { return state_; }
    // The model (its zoo name for a zoo model), text, variant, view, selection and colour map.
    // No backend: that is the window's Compute choice, not what it shows.
    io::Scenario scenario() const;
    // Sets the view, colour map, mean of heads and head; the query is cleared (a scenario's query
    // is one of its own text's tokens: select it once that text has run).
    void showScenarioView(const io::Scenario& scenario);
    ViewKind view() const { return view_; }
    bool canvasShown() const;
    bool atlasShown() const;
    bool canvasShowsAtlas() const { return canvasShown() && canvasAtlas_; }
    AtlasPage* atlasPage() const { return atlasPage_; }
    const ForwardResult* result() const { return result_.get(); }
    int tokenCount() const { return result_ ? result_->tokenCount() : 0; }

    ForwardRunner& runner() { return *runner_; }
    // Whether the figure waits for a long pass's map, built off the GUI thread (refreshed()
    // follows).
    bool drawing() const;
    // Whether `kind` can be drawn from the current result for `state` now; else the map it needs
    // is built off the GUI thread, one build at a time, and figureUpdated() follows. Why here:
    // the views beside the workspace (compare mode's A, presentation mode) draw its result, and
    // one loader per result builds each map once.
    bool ensureDrawable(ViewKind kind, const ViewState& state);
    QPlainTextEdit* textEdit() const { return textEdit_; }
    TokenStrip* tokenStrip() const { return tokenStrip_; }
    FigureView* figureView() const { return figureView_; }
    ViewBar* viewBar() const { return tabs_; }
    // The kNN-LM view's λ (0 to 100 hundredths): re-mixes the shown pass, runs no model.
    QSlider* knnLambdaSlider() const { return knnSlider_; }
    // The Features view's feature chooser (-1: every token's strongest features).
    QSpinBox* featureBox() const { return featureBox_; }
    QWidget* canvasPage() const { return canvasPage_; }
    QList<QAction*> navigationActions() const { return navigation_; }
    QList<QAction*> viewActions() const { return viewActions_; }

    void saveSettings() const;
    void restoreSettings();

public Q_SLOTS:
    void setView(ViewKind kind);
    void showCanvas();
    void showAtlas();
    void showAtlasOnCanvas();
    void selectHead(int layer, int head);
    void stepLayer(int delta);
    void stepHead(int delta);
    void selectQuery(int index);
    void setAverageHeads(bool average);
    void setColormap(render::Colormap map);
    // The Features view's page of `feature`, or (-1) its overview.
    void selectFeature(int feature);

Q_SIGNALS:
    void resultShown(int tokens); // the views now show a new forward pass
    void modelChanged(const ModelSpec& spec);
    void knockoutsChanged(const HeadKnockouts& knockouts);
    void saeChanged(); // attached, replaced or detached
    void featureSelected(int feature);
    void message(const QString& text);
    void memoryRefused(const QString& reason); // a pass refused because it would not fit
    void atlasFailed(const QString& reason);   // the Atlas's pass refused or failed
    void readoutChanged(const QString& text);
    void refreshed(); // the figure was redrawn from the current result and selection
    // The result or selection changed: the figure was redrawn, or shows "Building …" while a long
    // pass's map is built off the GUI thread (refreshed() follows once it is drawn).
    void figureUpdated();
    // A scenario was shown: the probe set its head roles are scored on, or none (the text).
    void scenarioProbesShown(const std::optional<analysis::GeneratedProbeSet>& probes);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    QWidget* createControls();
    void fitTokenStrip(); // the strip's height: all of it, or a quarter of the workspace scrolled
    void createActions();
    void onResult(std::shared_ptr<const ForwardResult> result);
    void onFailure(const QString& reason);
    void onTabChanged(int index);
    void refresh();
    void updateSummary();
    void updateAtlas();  // the Atlas draws the current text and selection, while shown
    void shareBackend(); // one of the views' pass and the Atlas's pass uses the backend
    QWidget* createKnnControls(QWidget* parent);
    void showKnnLambda();
    QWidget* createFeatureControls(QWidget* parent);
    void onPanelRowClicked(int panel, int row);

    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const ForwardResult> result_;
    QJsonObject variantJson_;
    std::optional<CorpusStats> corpus_;
    ViewState state_;
    ViewKind view_ = ViewKind::Heatmap;
    ForwardRunner* runner_ = nullptr;
    StreamedViewLoader* streamedLoader_ = nullptr; // a long pass's maps, built off the GUI thread
    QPlainTextEdit* textEdit_ = nullptr;
    QLabel* errorLabel_ = nullptr;
    TokenStrip* tokenStrip_ = nullptr;
    QScrollArea* tokenArea_ = nullptr; // holds the strip
    ViewBar* tabs_ = nullptr;
    QSpinBox* layerBox_ = nullptr;
    QSpinBox* headBox_ = nullptr;
    QCheckBox* averageBox_ = nullptr;
    QLabel* summaryLabel_ = nullptr;
    QString passProgress_; // "layer 3 of 12 · Esc cancels" while a pass runs
    QTimer progressDelay_; // runs while a pass is too young to show its progress
    QLabel* readoutLabel_ = nullptr;
    QWidget* knnControls_ = nullptr;
    QSlider* knnSlider_ = nullptr;
    QLabel* knnLabel_ = nullptr;
    QWidget* featureControls_ = nullptr;
    QSpinBox* featureBox_ = nullptr;
    QStackedWidget* pages_ = nullptr;
    FigureView* figureView_ = nullptr;
    QWidget* canvasPage_ = nullptr;
    AtlasPage* atlasPage_ = nullptr;
    QTimer atlasDebounce_; // typing redraws the Atlas after a pause, as the views' pass waits
    bool atlasHoldsBackend_ = false;
    bool canvasAtlas_ = false; // the canvas tab draws the atlas, not the selected head's map
    QList<QAction*> navigation_;
    QList<QAction*> viewActions_;
};
} // namespace headlight::app
