#pragma once
// The variant dock's SAE feature editor: edits of the attached SAE's features inside the pass,
// at its hook, through the same residual edit as `headlight inspect --sae` (analysis/sae_edit.h,
// docs/features.md "Editing features inside the pass"), so every view re-runs with them:
//   Zero F        clamp F to 0, with the error term kept (only the edit changes the pass)
//   Clamp F = V   clamp F to V, the same way
//   Steer F × α   add α × W_dec[F] at every position
//   Splice        the reconstruction replaces the activations (no error term), with the clamps
//   Clear         no SAE edit
// Each is one step on the dock's undo stack (Ctrl+Z / Ctrl+Shift+Z) and part of the scenario a
// scene saves (`edits`). The feature follows the Features view's choice.

#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QUndoStack;

namespace headlight::app {

class Workspace;
struct HeadKnockouts;

class FeatureEditor : public QWidget {
    Q_OBJECT
public:
    FeatureEditor(Workspace* workspace, QUndoStack* undo, QWidget* parent = nullptr);

    QSpinBox* featureBox() const { return feature_; }
    QDoubleSpinBox* valueBox() const { return value_; }
    QCheckBox* spliceBox() const { return splice_; }
    QLabel* summary() const { return summary_; }

    // The actions of the buttons, for the feature and value in the boxes; each one undo step.
    void zeroFeature();
    void clampFeature();
    void steerFeature();
    void setSpliced(bool spliced);
    void clearEdits();

private:
    // Replaces the attached SAE's edit in the workspace's knockouts by `change` applied to it.
    template <typename Change> void edit(const QString& what, Change change);
    void showState();

    Workspace* workspace_;
    QUndoStack* undo_;
    QLabel* sae_;
    QSpinBox* feature_;
    QDoubleSpinBox* value_;
    QCheckBox* splice_;
    QPushButton* zero_;
    QPushButton* clamp_;
    QPushButton* steer_;
    QPushButton* clear_;
    QLabel* summary_;
};
} // namespace headlight::app
