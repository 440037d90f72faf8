#pragma once
// The variant panel: every option of optionGroups() as a control (a combo box, radio buttons or
// a check box, and a spin box for the choice's main parameter), each with a tooltip quoting its
// catalogue entry. Choices the loaded checkpoint cannot run are disabled, with the engine's
// reason (variants::planForward) in their tooltip.
//
// The panel holds no state of its own beyond the spec it shows: an edit emits edited(next spec)
// and the owner decides (the dock pushes it on the undo stack and calls setSpec back).

#include "model/model_spec.h"
#include "variant_options.h"

#include <QJsonObject>
#include <QWidget>
#include <optional>
#include <vector>

class QAbstractButton;
class QButtonGroup;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;

namespace headlight::app {

class VariantPanel : public QWidget {
    Q_OBJECT
public:
    explicit VariantPanel(QWidget* parent = nullptr);

    void setModelSpec(std::optional<ModelSpec> spec); // nullopt: no model, nothing is checked
    void setSpec(const QJsonObject& spec);            // shows it; emits nothing
    const QJsonObject& spec() const { return spec_; }

    // For tests and the latency tool: the controls of group `group` (optionGroups() order).
    QComboBox* comboOf(int group) const;
    QAbstractButton* buttonOf(int group, int choice) const; // radio or check box
    QDoubleSpinBox* parameterOf(int group) const;
    QPushButton* resetButton() const { return reset_; }
    // Why the choice cannot run on this checkpoint, "" when it can.
    QString unavailableReason(int group, int choice) const;

Q_SIGNALS:
    void edited(const QJsonObject& next, int mergeKey); // mergeKey ≥ 0: a parameter nudge

private:
    void labelCheckpointKernel();
    struct GroupControls {
        QComboBox* combo = nullptr;
        QButtonGroup* buttons = nullptr; // radios, or the toggle's one check box
        QDoubleSpinBox* parameter = nullptr;
        QLabel* parameterLabel = nullptr;
        std::vector<QString> reasons; // per choice
    };

    QWidget* createGroup(int index);
    void choose(int group, int choice);
    void nudgeParameter(int group, double value);
    void refreshControls();
    void refreshAvailability();
    void showParameter(int group, int choice);
    QString checkCandidate(const QJsonObject& candidate) const;
    void markChoice(int group, int choice, const QString& reason);

    QJsonObject spec_;
    std::optional<ModelSpec> model_;
    std::vector<GroupControls> groups_;
    QPushButton* reset_ = nullptr;
};
} // namespace headlight::app
