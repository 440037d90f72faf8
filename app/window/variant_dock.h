#pragma once
// The variant dock: the variant panel, the spec it builds as read-only JSON, and the undo stack
// of variant edits, head knockouts (knockout_grid.h), SAE feature edits (feature_editor.h) and
// the steering vector (steering_editor.h).
// Every edit becomes a QUndoCommand, so Ctrl+Z / Ctrl+Shift+Z walk back and forth through specs and
// each step re-runs the forward pass (through the workspace's runner, latest wins). File ▸ Save
// variant spec… writes the JSON atomically, ready for `headlight inspect --variant`.

#include <QDockWidget>
#include <QJsonObject>

class QAction;
class QPlainTextEdit;
class QUndoStack;

namespace headlight::app {

class FeatureEditor;
class KnockoutGrid;
class SteeringEditor;
class VariantPanel;
class Workspace;

class VariantDock : public QDockWidget {
    Q_OBJECT
public:
    VariantDock(Workspace* workspace, QWidget* parent = nullptr);

    VariantPanel* panel() const { return panel_; }
    KnockoutGrid* knockoutGrid() const { return knockouts_; }
    FeatureEditor* featureEditor() const { return features_; }
    SteeringEditor* steeringEditor() const { return steering_; }
    QPlainTextEdit* jsonView() const { return json_; }
    QUndoStack* undoStack() const { return undo_; }
    QAction* undoAction() const { return undoAction_; }
    QAction* redoAction() const { return redoAction_; }
    QAction* saveAction() const { return save_; }

    // Shows `spec` in the panel and the JSON view and runs it: what undo and redo call.
    void apply(const QJsonObject& spec);
    // Writes the current spec; false (and a message in `error`) when the file cannot be written.
    bool saveSpec(const QString& path, QString* error = nullptr) const;

private:
    void onEdited(const QJsonObject& next, int mergeKey);
    void chooseSaveFile();

    Workspace* workspace_;
    VariantPanel* panel_;
    KnockoutGrid* knockouts_;
    FeatureEditor* features_;
    SteeringEditor* steering_;
    QPlainTextEdit* json_;
    QUndoStack* undo_;
    QAction* undoAction_;
    QAction* redoAction_;
    QAction* save_;
};
} // namespace headlight::app
