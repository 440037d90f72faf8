#pragma once
// The variant dock's steering vector: a direction added α times to the residual stream at its
// hook in every pass, through the same residual edit as `headlight inspect --steering-vector F
// --strength α` (analysis/residual_edit_spec.h, docs/features.md "Steering vectors"), so every
// view re-runs with it:
//   Make vector…  two sets of texts, a hook and a method (steering_dialog.h), made as
//                 `headlight steer` makes it (session/steering_recipe.h) in the background,
//                 saved where the user says, then opened
//   Open vector…  Headlight's own safetensors (`headlight steer`) or a llama.cpp GGUF control
//                 vector, checked against the open model before it is added
//   Strength      a slider (α from −20 to 20 in tenths; one step when it is let go) and a box
//                 (any α)
//   Remove        no steering vector
// Each is one step on the dock's undo stack (Ctrl+Z / Ctrl+Shift+Z) and part of the scenario a
// scene saves (`edits`). The window steers with one vector at a time, as the CLI does.

#include "analysis/residual_edit_spec.h"
#include "steering_recipe.h"

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

class QAction;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QUndoStack;

namespace headlight::app {

class BackgroundJob;
class Workspace;

class SteeringEditor : public QWidget {
    Q_OBJECT
public:
    SteeringEditor(Workspace* workspace, QUndoStack* undo, QWidget* parent = nullptr);
    ~SteeringEditor() override;

    // File ▸ Make steering vector… and Open steering vector…: the pane's buttons as menu
    // entries (and so in the command palette), enabled while a model is open.
    QAction* makeAction() const { return makeAction_; }
    QAction* openAction() const { return openAction_; }
    QSlider* slider() const { return slider_; }
    QDoubleSpinBox* strengthBox() const { return strength_; }
    QLabel* summary() const { return summary_; }

    // Reads `path` against the open model and, when it fits, makes it the pass's steering vector
    // at the box's strength (one undo step). Else false, with the one-line reason in `error`.
    bool openVector(const QString& path, QString* error);
    // Makes the vector of `recipe` on the open model in the background (a progress dialog with
    // Cancel), writes it to `path` and opens it: vectorMade or makeFailed tells the end. False,
    // with the one-line reason in `error`, when it cannot start (no model, a job running, a
    // hook the model lacks, a set without texts).
    bool makeVector(const SteeringRecipe& recipe, const QString& path, QString* error);
    // The actions of the controls; each one undo step (none when nothing changes).
    void setStrength(double strength);
    void removeVector();

Q_SIGNALS:
    void vectorMade(const QString& path);
    void makeFailed(const QString& error);

private:
    void chooseFile();
    void chooseRecipe();
    void collectMade(const QString& error);
    // The pass's steering vector edit, if it has one.
    std::optional<analysis::ResidualEditSpec> current() const;
    // Replaces the pass's steering vector by `vector` (none: removes it).
    void replaceVector(const QString& what, std::optional<analysis::ResidualEditSpec> vector);
    // "blocks.1.hook_resid_post" or "31 hooks, blocks.1 to blocks.31", for the summary.
    // (The file is read again each time: it is small, and the model may have changed.)
    QString hooksOf(const analysis::ResidualEditSpec& vector) const;
    void showState();

    Workspace* workspace_;
    QUndoStack* undo_;
    QLabel* summary_;
    QSlider* slider_;
    QDoubleSpinBox* strength_;
    QPushButton* make_;
    QPushButton* open_;
    QPushButton* remove_;
    QAction* makeAction_;
    QAction* openAction_;
    QString making_;                     // the file the job in flight writes
    std::unique_ptr<BackgroundJob> job_; // last: destroyed first, waiting for its work
};
} // namespace headlight::app
