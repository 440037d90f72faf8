#pragma once
// View ▸ Compare: two scenarios side by side. Scenario A is the workspace (its model, variant,
// text and selection); scenario B runs the same text through model B (A's checkpoint, or another
// folder) with variant B (a catalogue option or a spec file), on its own worker and its own copy
// of the model (a backend runs one pass at a time, so B never shares A's). Both
// heatmaps follow the workspace's layer, head and query cursor; a click on a row of either
// selects that query everywhere; the third figure is A − B on a diverging scale. While the
// workspace shows the output effect (ViewKind::VariantEffect), A and B each show their variant
// against exact attention instead of the heatmap. B runs only while the dock is shown. A long
// pass's maps are built off the GUI thread (A's on the workspace's loader, B's on the dock's
// own), each side saying which map it waits for.

#include "figure_builders.h"
#include "io/scenario.h"

#include <QDockWidget>
#include <QJsonObject>
#include <memory>

class QComboBox;
class QLabel;

namespace headlight::app {

class FigureView;
class ModelSession;
class StreamedViewLoader;
class Workspace;

class CompareDock : public QDockWidget {
    Q_OBJECT
public:
    CompareDock(Workspace* workspace, QWidget* parent = nullptr);

    // Variant B as the variant spec's JSON; a spec the engine refuses shows its reason.
    void setVariantB(const QJsonObject& spec);
    // Model B: a checkpoint folder (loaded on a worker), or empty for A's model.
    void setModelB(const QString& folder);
    // What B shows: A's scenario (text, selection) with B's model and variant, as a heatmap.
    io::Scenario scenarioB() const;

    const ForwardResult* resultB() const { return resultB_.get(); }
    QComboBox* variantBox() const { return variantBox_; }
    QComboBox* modelBox() const { return modelBox_; }
    QLabel* statusLabel() const { return status_; }
    FigureView* viewA() const { return viewA_; }
    FigureView* viewB() const { return viewB_; }
    FigureView* differenceView() const { return difference_; }

Q_SIGNALS:
    void resultBShown(); // B's figures show a new pass

private:
    QWidget* createControls();
    void fillVariants();
    void fillModels();
    void onVariantPicked(int index);
    void onModelPicked(int index);
    void onModelBLoaded();
    QString folderB() const; // the checkpoint B should run, "" while A has none
    void runB();             // loads B's model first when it is not the wanted one
    ViewKind sideView() const; // what A and B show: the heatmap or the output effect
    void onResultB(std::shared_ptr<const ForwardResult> result);
    void refresh();

    Workspace* workspace_;
    ForwardRunner* runnerB_;
    ModelSession* sessionB_;
    StreamedViewLoader* loaderB_; // B's long-pass maps, built off the GUI thread
    QString chosenFolder_; // B's own checkpoint; empty: the same checkpoint as A
    QJsonObject variantB_;
    std::shared_ptr<const ForwardResult> resultB_;
    QComboBox* modelBox_ = nullptr;
    QComboBox* variantBox_ = nullptr;
    QLabel* status_ = nullptr;
    FigureView* viewA_ = nullptr;
    FigureView* viewB_ = nullptr;
    FigureView* difference_ = nullptr;
};

// A − B of the selected head (or layer mean) of two passes over the same tokens, on a
// diverging scale symmetric about 0; a note when the tokens differ.
render::Figure differenceFigure(const ForwardResult& a, const ForwardResult& b,
                                const ViewState& state);
} // namespace headlight::app
