#include "feature_editor.h"

#include "knockout_edit.h"
#include "workspace.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QUndoStack>
#include <algorithm>

namespace headlight::app {
namespace {

void setValue(std::vector<analysis::FeatureValue>& values, int feature, float value, bool keep) {
    std::erase_if(values,
                  [feature](const analysis::FeatureValue& v) { return v.feature == feature; });
    if (keep) values.push_back({feature, value});
}

// "clamp 116 = 0, steer 208 × 4, splice with-error", as the scene caption words it.
QString describe(const analysis::SaeFeatureEdits& edits) {
    QStringList parts;
    for (const analysis::FeatureValue& clamp : edits.clamps)
        parts << QStringLiteral("clamp %1 = %2")
                     .arg(clamp.feature)
                     .arg(double(clamp.value), 0, 'g', 3);
    for (const analysis::FeatureValue& steer : edits.steers)
        parts << QStringLiteral("steer %1 × %2")
                     .arg(steer.feature)
                     .arg(double(steer.value), 0, 'g', 3);
    if (edits.splice != analysis::SaeSplice::None)
        parts << QStringLiteral("splice %1").arg(analysis::saeSpliceName(edits.splice));
    return parts.join(QStringLiteral(", "));
}
} // namespace

FeatureEditor::FeatureEditor(Workspace* workspace, QUndoStack* undo, QWidget* parent)
    : QWidget(parent)
    , workspace_(workspace)
    , undo_(undo)
    , sae_(new QLabel(this))
    , feature_(new QSpinBox(this))
    , value_(new QDoubleSpinBox(this))
    , splice_(new QCheckBox(tr("Splice (no error term)"), this))
    , zero_(new QPushButton(tr("Zero"), this))
    , clamp_(new QPushButton(tr("Clamp to value"), this))
    , steer_(new QPushButton(tr("Steer × value"), this))
    , clear_(new QPushButton(tr("Clear"), this))
    , summary_(new QLabel(this)) {
    sae_->setWordWrap(true);
    summary_->setWordWrap(true);
    summary_->setObjectName(QStringLiteral("featureEditSummary"));
    feature_->setObjectName(QStringLiteral("editFeature"));
    feature_->setRange(0, 0);
    value_->setRange(-1000.0, 1000.0);
    value_->setDecimals(2);
    value_->setSingleStep(0.5);
    splice_->setToolTip(tr("The SAE's reconstruction replaces the activations at its hook, with "
                           "the clamps, instead of only the edit changing them"));
    value_->setToolTip(tr("The activation a clamp sets, or α of a steer (α × the feature's "
                          "decoder row added at every position)"));
    // Why two columns: the dock is as wide as its widest box, and the figure gets the rest.
    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(sae_, 0, 0, 1, 2);
    layout->addWidget(new QLabel(tr("Feature"), this), 1, 0);
    layout->addWidget(feature_, 1, 1);
    layout->addWidget(new QLabel(tr("Value"), this), 2, 0);
    layout->addWidget(value_, 2, 1);
    layout->addWidget(zero_, 3, 0);
    layout->addWidget(clamp_, 3, 1);
    layout->addWidget(steer_, 4, 0);
    layout->addWidget(clear_, 4, 1);
    layout->addWidget(splice_, 5, 0, 1, 2);
    layout->addWidget(summary_, 6, 0, 1, 2);
    connect(zero_, &QPushButton::clicked, this, &FeatureEditor::zeroFeature);
    connect(clamp_, &QPushButton::clicked, this, &FeatureEditor::clampFeature);
    connect(steer_, &QPushButton::clicked, this, &FeatureEditor::steerFeature);
    connect(clear_, &QPushButton::clicked, this, &FeatureEditor::clearEdits);
    connect(splice_, &QCheckBox::clicked, this, &FeatureEditor::setSpliced);
    connect(workspace_, &Workspace::saeChanged, this, &FeatureEditor::showState);
    connect(workspace_, &Workspace::knockoutsChanged, this, &FeatureEditor::showState);
    connect(workspace_, &Workspace::featureSelected, this, [this](int feature) {
        if (feature >= 0) feature_->setValue(feature);
    });
    showState();
}

template <typename Change> void FeatureEditor::edit(const QString& what, Change change) {
    const std::shared_ptr<const AttachedSae>& sae = workspace_->sae();
    if (!sae) return;
    const HeadKnockouts before = workspace_->knockouts();
    HeadKnockouts after = before;
    const std::string folder = sae->folder.toStdString();
    const auto ours =
        std::find_if(after.edits.begin(), after.edits.end(),
                     [&](const analysis::ResidualEditSpec& e) { return e.sae == folder; });
    analysis::SaeFeatureEdits features =
        ours == after.edits.end() ? analysis::SaeFeatureEdits{} : ours->features;
    change(features);
    // Why: a clamp reaches the pass only through the reconstruction (analysis/sae_edit.h).
    if (!features.clamps.empty() && features.splice == analysis::SaeSplice::None)
        features.splice = analysis::SaeSplice::WithError;
    if (features.clamps.empty() && features.splice == analysis::SaeSplice::WithError)
        features.splice = analysis::SaeSplice::None;
    if (ours != after.edits.end()) {
        if (features.empty())
            after.edits.erase(ours);
        else
            ours->features = features;
    } else if (!features.empty()) {
        after.edits.push_back({folder, features, {}, 1.0f});
    }
    if (after == before) return;
    undo_->push(new KnockoutEdit(workspace_, before, after, what));
}

void FeatureEditor::zeroFeature() {
    const int f = feature_->value();
    edit(tr("Zero feature %1").arg(f),
         [f](analysis::SaeFeatureEdits& e) { setValue(e.clamps, f, 0.0f, true); });
}

void FeatureEditor::clampFeature() {
    const int f = feature_->value();
    const auto v = float(value_->value());
    edit(tr("Clamp feature %1 to %2").arg(f).arg(double(v)),
         [f, v](analysis::SaeFeatureEdits& e) { setValue(e.clamps, f, v, true); });
}

void FeatureEditor::steerFeature() {
    const int f = feature_->value();
    const auto a = float(value_->value());
    edit(tr("Steer feature %1 × %2").arg(f).arg(double(a)),
         [f, a](analysis::SaeFeatureEdits& e) { setValue(e.steers, f, a, a != 0.0f); });
}

void FeatureEditor::setSpliced(bool spliced) {
    edit(spliced ? tr("Splice the SAE's reconstruction") : tr("Keep the SAE's error term"),
         [spliced](analysis::SaeFeatureEdits& e) {
             e.splice = spliced            ? analysis::SaeSplice::NoError
                        : e.clamps.empty() ? analysis::SaeSplice::None
                                           : analysis::SaeSplice::WithError;
         });
}

void FeatureEditor::clearEdits() {
    edit(tr("Clear the SAE's edits"), [](analysis::SaeFeatureEdits& e) { e = {}; });
}

void FeatureEditor::showState() {
    const std::shared_ptr<const AttachedSae>& sae = workspace_->sae();
    for (QWidget* control :
         std::initializer_list<QWidget*>{feature_, value_, splice_, zero_, clamp_, steer_, clear_})
        control->setEnabled(bool(sae));
    if (!sae) {
        sae_->setText(tr("SAE features: open an SAE (File ▸ Open SAE…, Ctrl+Shift+E) to edit "
                         "its features in the pass."));
        summary_->clear();
        return;
    }
    sae_->setText(
        tr("SAE %1 at %2").arg(sae->name(), QString::fromStdString(sae->sae.config.hookName)));
    feature_->setMaximum(sae->sae.config.dSae - 1);
    const std::string folder = sae->folder.toStdString();
    analysis::SaeFeatureEdits features;
    for (const analysis::ResidualEditSpec& e : workspace_->knockouts().edits)
        if (e.sae == folder) features = e.features;
    const QSignalBlocker block(splice_);
    splice_->setChecked(features.splice == analysis::SaeSplice::NoError);
    summary_->setText(features.empty() ? tr("No edit: the pass runs as the model computes it.")
                                       : tr("Editing: %1").arg(describe(features)));
}
} // namespace headlight::app
