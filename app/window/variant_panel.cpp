#include "variant_panel.h"

#include "variants/forward_plan.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QStandardItemModel>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

const OptionGroup& groupAt(int index) {
    return optionGroups()[std::size_t(index)];
}

QString vanillaTooltip() {
    for (const variants::CatalogueEntry& entry : variants::catalogue())
        if (entry.item == 1)
            return QStringLiteral("<b>%1</b><p>%2</p><p><b>%3</b>: every option off, the "
                                  "checkpoint's own forward pass. <tt>{}</tt></p>")
                .arg(QString::fromUtf8(entry.name).toHtmlEscaped(),
                     QString::fromUtf8(entry.citation).toHtmlEscaped(),
                     QString::fromLatin1(variants::needsName(entry.needs)));
    return {};
}
} // namespace

VariantPanel::VariantPanel(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    reset_ = new QPushButton(tr("Vanilla (reset every option)"), this);
    reset_->setToolTip(vanillaTooltip());
    connect(reset_, &QPushButton::clicked, this, [this] {
        if (!spec_.isEmpty()) Q_EMIT edited(QJsonObject{}, -1);
    });
    layout->addWidget(reset_);
    groups_.resize(optionGroups().size());
    for (int g = 0; g < int(optionGroups().size()); ++g)
        layout->addWidget(createGroup(g));
    layout->addStretch(1);
    refreshControls();
}

QWidget* VariantPanel::createGroup(int index) {
    const OptionGroup& group = groupAt(index);
    GroupControls& controls = groups_[std::size_t(index)];
    auto* box = new QGroupBox(group.title, this);
    auto* form = new QFormLayout(box);
    form->setContentsMargins(8, 4, 8, 4);
    if (group.style == GroupStyle::Combo) {
        controls.combo = new QComboBox(box);
        for (const OptionChoice& choice : group.choices)
            controls.combo->addItem(choice.label);
        connect(controls.combo, &QComboBox::activated, this,
                [this, index](int choice) { choose(index, choice); });
        form->addRow(controls.combo);
    } else {
        controls.buttons = new QButtonGroup(box);
        controls.buttons->setExclusive(group.style == GroupStyle::Radios);
        const std::size_t first = group.style == GroupStyle::Toggle ? 1 : 0;
        for (std::size_t c = first; c < group.choices.size(); ++c) {
            QAbstractButton* button =
                group.style == GroupStyle::Toggle
                    ? static_cast<QAbstractButton*>(new QCheckBox(group.choices[c].label, box))
                    : new QRadioButton(group.choices[c].label, box);
            controls.buttons->addButton(button, int(c));
            form->addRow(button);
        }
        connect(controls.buttons, &QButtonGroup::idClicked, this, [this, index](int choice) {
            const bool toggle = groupAt(index).style == GroupStyle::Toggle;
            const bool on = groups_[std::size_t(index)].buttons->button(choice)->isChecked();
            choose(index, toggle && !on ? 0 : choice);
        });
    }
    controls.parameter = new QDoubleSpinBox(box);
    controls.parameterLabel = new QLabel(box);
    form->addRow(controls.parameterLabel, controls.parameter);
    connect(controls.parameter, &QDoubleSpinBox::valueChanged, this,
            [this, index](double value) { nudgeParameter(index, value); });
    return box;
}

QComboBox* VariantPanel::comboOf(int group) const {
    return groups_[std::size_t(group)].combo;
}

QAbstractButton* VariantPanel::buttonOf(int group, int choice) const {
    const QButtonGroup* buttons = groups_[std::size_t(group)].buttons;
    return buttons ? buttons->button(choice) : nullptr;
}

QDoubleSpinBox* VariantPanel::parameterOf(int group) const {
    return groups_[std::size_t(group)].parameter;
}

QString VariantPanel::unavailableReason(int group, int choice) const {
    return groups_[std::size_t(group)].reasons.at(std::size_t(choice));
}

void VariantPanel::setModelSpec(std::optional<ModelSpec> spec) {
    model_ = std::move(spec);
    labelCheckpointKernel();
    refreshAvailability();
}

// The first kernel choice keeps the checkpoint's own kernel, which on a zoo model trained with
// another one (performer, reformer, linformer) is not softmax: the combo names it.
void VariantPanel::labelCheckpointKernel() {
    const auto own = model_ ? model_->zoo.kernel : variants::AttentionKernel::Softmax;
    for (int g = 0; g < int(groups_.size()); ++g) {
        const OptionGroup& group = groupAt(g);
        QComboBox* combo = groups_[std::size_t(g)].combo;
        if (group.key != QLatin1String("attention") || group.field != QLatin1String("kernel") ||
            !combo)
            continue;
        QString label = group.choices[0].label;
        for (int c = 1; c < int(group.choices.size()); ++c) {
            const QJsonObject choice = withChoice({}, group, c, std::nullopt);
            const auto spec =
                variants::parseVariantSpec(QJsonDocument(choice).toJson().toStdString());
            if (own != variants::AttentionKernel::Softmax && spec.kernel == own)
                label = QStringLiteral("%1 (the checkpoint's own)")
                            .arg(group.choices[std::size_t(c)].label);
        }
        combo->setItemText(0, label);
    }
}

void VariantPanel::setSpec(const QJsonObject& spec) {
    spec_ = spec;
    refreshControls();
}

void VariantPanel::choose(int group, int choice) {
    const OptionGroup& g = groupAt(group);
    // Re-choosing the current choice keeps its parameter; a new one starts at its default.
    const std::optional<double> parameter = choiceOf(spec_, g) == choice
                                                ? std::optional(app::parameterOf(spec_, g, choice))
                                                : std::nullopt;
    const QJsonObject next = withChoice(spec_, g, choice, parameter);
    if (next != spec_)
        Q_EMIT edited(next, -1);
    else
        refreshControls(); // a disabled or unchanged choice: put the control back
}

void VariantPanel::nudgeParameter(int group, double value) {
    const OptionGroup& g = groupAt(group);
    const int choice = choiceOf(spec_, g);
    const QJsonObject next = withChoice(spec_, g, choice, value);
    if (next != spec_) Q_EMIT edited(next, group);
}

void VariantPanel::refreshControls() {
    for (int g = 0; g < int(groups_.size()); ++g) {
        GroupControls& controls = groups_[std::size_t(g)];
        const int choice = choiceOf(spec_, groupAt(g));
        if (controls.combo) {
            const QSignalBlocker block(controls.combo);
            controls.combo->setCurrentIndex(choice);
        } else if (QAbstractButton* button = controls.buttons->button(choice)) {
            const QSignalBlocker block(controls.buttons);
            button->setChecked(true);
        } else {
            // A toggle that is off: its only button is the "on" one.
            controls.buttons->button(1)->setChecked(false);
        }
        showParameter(g, choice);
    }
    refreshAvailability();
}

void VariantPanel::showParameter(int group, int choice) {
    GroupControls& controls = groups_[std::size_t(group)];
    const OptionParameter& p = groupAt(group).choices[std::size_t(choice)].parameter;
    controls.parameter->setVisible(p.key != nullptr);
    controls.parameterLabel->setVisible(p.key != nullptr);
    if (!p.key) return;
    const QSignalBlocker block(controls.parameter);
    controls.parameterLabel->setText(p.label);
    controls.parameter->setDecimals(p.decimals);
    controls.parameter->setRange(p.low, p.high);
    controls.parameter->setSingleStep(p.step);
    controls.parameter->setValue(app::parameterOf(spec_, groupAt(group), choice));
}

// Each choice is tried on top of the current spec: an option that conflicts with another one
// already on (LSH with a mask) is disabled with the engine's reason, as is one the checkpoint
// cannot run (Linformer on a causal model).
void VariantPanel::refreshAvailability() {
    for (int g = 0; g < int(groups_.size()); ++g) {
        const OptionGroup& group = groupAt(g);
        const int current = choiceOf(spec_, group);
        groups_[std::size_t(g)].reasons.assign(group.choices.size(), QString());
        for (int c = 0; c < int(group.choices.size()); ++c) {
            const QString reason = c == current
                                       ? QString()
                                       : checkCandidate(withChoice(spec_, group, c, std::nullopt));
            markChoice(g, c, reason);
        }
    }
}

QString VariantPanel::checkCandidate(const QJsonObject& candidate) const {
    if (!model_) return {};
    try {
        variants::planForward(
            variants::parseVariantSpec(QJsonDocument(candidate).toJson().toStdString()), *model_);
    } catch (const variants::VariantError& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

void VariantPanel::markChoice(int group, int choice, const QString& reason) {
    GroupControls& controls = groups_[std::size_t(group)];
    controls.reasons[std::size_t(choice)] = reason;
    const OptionChoice& option = groupAt(group).choices[std::size_t(choice)];
    const QString tip = choiceTooltip(option, reason);
    if (controls.combo) {
        auto* model = qobject_cast<QStandardItemModel*>(controls.combo->model());
        model->item(choice)->setEnabled(reason.isEmpty());
        controls.combo->setItemData(choice, tip, Qt::ToolTipRole);
        if (choice == controls.combo->currentIndex()) controls.combo->setToolTip(tip);
        return;
    }
    QAbstractButton* button = controls.buttons->button(choice);
    if (!button) return;
    button->setEnabled(reason.isEmpty());
    button->setToolTip(tip);
}
} // namespace headlight::app
