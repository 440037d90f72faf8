#include "steering_editor.h"

#include "background_job.h"
#include "knockout_edit.h"
#include "steering_dialog.h"
#include "workspace.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QUndoStack>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr int kSteeringSliderTenths = 200; // the slider spans α in [−20, 20]

bool isSteeringVector(const analysis::ResidualEditSpec& edit) {
    return edit.sae.empty();
}

// A SteeringRecipeError's part as the dialog names it.
std::string steeringPartName(const std::string& part) {
    if (part == "positive") return "the texts to steer towards";
    if (part == "negative") return "the texts to steer away from";
    return "the " + part;
}

// The hooks a vector file edits on `model`; throws ResidualEditError (or the reader's error).
std::vector<analysis::HookedEdit> steeringHooks(const analysis::ResidualEditSpec& vector,
                                                const LoadedModel& model) {
    return analysis::residualEditsOf(vector, model.model->spec());
}
} // namespace

SteeringEditor::SteeringEditor(Workspace* workspace, QUndoStack* undo, QWidget* parent)
    : QWidget(parent)
    , workspace_(workspace)
    , undo_(undo)
    , summary_(new QLabel(this))
    , slider_(new QSlider(Qt::Horizontal, this))
    , strength_(new QDoubleSpinBox(this))
    , make_(new QPushButton(tr("Make vector…"), this))
    , open_(new QPushButton(tr("Open vector…"), this))
    , remove_(new QPushButton(tr("Remove"), this))
    , makeAction_(new QAction(tr("&Make steering vector…"), this))
    , openAction_(new QAction(tr("Open steerin&g vector…"), this))
    , job_(std::make_unique<BackgroundJob>(workspace, this)) {
    summary_->setWordWrap(true);
    summary_->setObjectName(QStringLiteral("steeringSummary"));
    slider_->setObjectName(QStringLiteral("steeringStrengthSlider"));
    slider_->setRange(-kSteeringSliderTenths, kSteeringSliderTenths);
    slider_->setValue(10);
    // Why no tracking: each pass takes a while on a real model; one runs when the slider is let
    // go (or stepped with the keys), and that is one undo step.
    slider_->setTracking(false);
    slider_->setPageStep(5);
    strength_->setObjectName(QStringLiteral("steeringStrength"));
    strength_->setRange(-1000.0, 1000.0);
    strength_->setDecimals(2);
    strength_->setSingleStep(0.5);
    strength_->setValue(1.0);
    strength_->setToolTip(tr("α: the vector is added α times at every position"));
    open_->setToolTip(tr("A steering vector from headlight steer (.safetensors) or a llama.cpp "
                         "control vector (.gguf)"));
    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(summary_, 0, 0, 1, 2);
    layout->addWidget(new QLabel(tr("Strength α"), this), 1, 0);
    layout->addWidget(strength_, 1, 1);
    layout->addWidget(slider_, 2, 0, 1, 2);
    layout->addWidget(make_, 3, 0);
    layout->addWidget(open_, 3, 1);
    layout->addWidget(remove_, 4, 1);
    make_->setToolTip(tr("The difference of the residual stream between two sets of texts, as "
                         "headlight steer makes it"));
    connect(make_, &QPushButton::clicked, this, &SteeringEditor::chooseRecipe);
    connect(open_, &QPushButton::clicked, this, &SteeringEditor::chooseFile);
    makeAction_->setStatusTip(make_->toolTip());
    openAction_->setStatusTip(open_->toolTip());
    connect(makeAction_, &QAction::triggered, this, &SteeringEditor::chooseRecipe);
    connect(openAction_, &QAction::triggered, this, &SteeringEditor::chooseFile);
    connect(job_.get(), &BackgroundJob::ended, this, &SteeringEditor::collectMade);
    connect(remove_, &QPushButton::clicked, this, &SteeringEditor::removeVector);
    connect(slider_, &QSlider::valueChanged, this,
            [this](int tenths) { setStrength(tenths / 10.0); });
    connect(strength_, &QDoubleSpinBox::editingFinished, this,
            [this] { setStrength(strength_->value()); });
    connect(workspace_, &Workspace::knockoutsChanged, this, &SteeringEditor::showState);
    connect(workspace_, &Workspace::modelChanged, this, &SteeringEditor::showState);
    showState();
}

SteeringEditor::~SteeringEditor() = default;

bool SteeringEditor::openVector(const QString& path, QString* error) {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model) {
        if (error) *error = tr("open a model first: a steering vector is read against its width");
        return false;
    }
    analysis::ResidualEditSpec vector{{}, {}, path.toStdString(), float(strength_->value())};
    try {
        steeringHooks(vector, *model);
    } catch (const std::exception& refusal) {
        if (error) *error = QString::fromUtf8(refusal.what());
        return false;
    }
    replaceVector(tr("Steer with %1").arg(QFileInfo(path).fileName()), vector);
    return true;
}

bool SteeringEditor::makeVector(const SteeringRecipe& recipe, const QString& path, QString* error) {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    QString reason = !model                      ? tr("open a model first")
                     : job_->running()           ? tr("a steering vector is already being made")
                     : recipe.positive.isEmpty() ? tr("give at least one text to steer towards")
                     : recipe.negative.isEmpty() ? tr("give at least one text to steer away from")
                                                 : QString();
    if (reason.isEmpty()) {
        try {
            steeringHook(*model, recipe.hook);
        } catch (const SteeringRecipeError& refusal) {
            reason = QString::fromUtf8(refusal.what());
        }
    }
    if (!reason.isEmpty()) {
        if (error) *error = reason;
        return false;
    }
    making_ = path;
    job_->start(tr("Steering vector"),
                tr("Reading %1 texts at %2…")
                    .arg(recipe.positive.size() + recipe.negative.size())
                    .arg(QString::fromStdString(recipe.hook)),
                recipe.positive.size() + recipe.negative.size(),
                [model, recipe, path](const BackgroundJob::Progress& progress) {
                    Tensor vector;
                    try {
                        vector = makeSteeringVector(*model, recipe, progress);
                    } catch (const SteeringRecipeError& refusal) {
                        throw std::runtime_error(steeringPartName(refusal.part()) + ": " +
                                                 refusal.what());
                    }
                    if (vector.size() > 0) writeSteeringRecipe(path, vector, recipe, *model);
                });
    return true;
}

void SteeringEditor::collectMade(const QString& error) {
    QString failure = error;
    if (failure.isEmpty() && !job_->cancelled() && openVector(making_, &failure)) {
        Q_EMIT vectorMade(making_);
        return;
    }
    if (failure.isEmpty()) return; // cancelled: nothing was written
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot make the steering vector"),
                                failure, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    Q_EMIT makeFailed(failure);
}

void SteeringEditor::chooseRecipe() {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model) return;
    SteeringDialog dialog(model->model->spec().layers, this);
    if (dialog.exec() != QDialog::Accepted) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save steering vector"),
                                                      QStringLiteral("steering.safetensors"),
                                                      tr("Steering vectors (*.safetensors)"));
    if (path.isEmpty()) return;
    QString error;
    if (!makeVector(dialog.recipe(), path, &error))
        QMessageBox::warning(this, tr("Cannot make the steering vector"), error);
}

void SteeringEditor::setStrength(double strength) {
    std::optional<analysis::ResidualEditSpec> vector = current();
    if (!vector || vector->strength == float(strength)) return;
    vector->strength = float(strength);
    replaceVector(tr("Steering strength %1").arg(strength, 0, 'g', 3), vector);
}

void SteeringEditor::removeVector() {
    replaceVector(tr("Remove the steering vector"), std::nullopt);
}

void SteeringEditor::chooseFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open steering vector"), QString(),
                                     tr("Steering vectors (*.safetensors *.gguf);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!openVector(path, &error))
        QMessageBox::warning(this, tr("Cannot steer with this vector"), error);
}

std::optional<analysis::ResidualEditSpec> SteeringEditor::current() const {
    const std::vector<analysis::ResidualEditSpec>& edits = workspace_->knockouts().edits;
    const auto found = std::find_if(edits.begin(), edits.end(), isSteeringVector);
    if (found == edits.end()) return std::nullopt;
    return *found;
}

void SteeringEditor::replaceVector(const QString& what,
                                   std::optional<analysis::ResidualEditSpec> vector) {
    const HeadKnockouts before = workspace_->knockouts();
    HeadKnockouts after = before;
    std::erase_if(after.edits, isSteeringVector);
    if (vector) after.edits.push_back(std::move(*vector));
    if (after == before) return;
    undo_->push(new KnockoutEdit(workspace_, before, after, what));
}

QString SteeringEditor::hooksOf(const analysis::ResidualEditSpec& vector) const {
    const std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model) return tr("no model");
    try {
        const std::vector<analysis::HookedEdit> hooks = steeringHooks(vector, *model);
        if (hooks.size() == 1) return QString::fromStdString(hooks.front().hook);
        return tr("%1 hooks, %2 to %3")
            .arg(hooks.size())
            .arg(QString::fromStdString(hooks.front().hook),
                 QString::fromStdString(hooks.back().hook));
    } catch (const std::exception& refusal) {
        return tr("no hook of this model (%1)").arg(QString::fromUtf8(refusal.what()));
    }
}

void SteeringEditor::showState() {
    const std::optional<analysis::ResidualEditSpec> vector = current();
    slider_->setEnabled(bool(vector));
    remove_->setEnabled(bool(vector));
    open_->setEnabled(bool(workspace_->sharedModel()));
    make_->setEnabled(bool(workspace_->sharedModel()));
    makeAction_->setEnabled(make_->isEnabled());
    openAction_->setEnabled(open_->isEnabled());
    if (!vector) {
        summary_->setText(tr("Steering vector: none. Open one made by headlight steer, or a "
                             "llama.cpp control vector, to add it to the residual stream."));
        return;
    }
    const QString name = QFileInfo(QString::fromStdString(vector->steeringVector)).fileName();
    summary_->setText(tr("Steering: %1 × %2 at %3")
                          .arg(name)
                          .arg(double(vector->strength), 0, 'g', 3)
                          .arg(hooksOf(*vector)));
    const QSignalBlocker blockSlider(slider_), blockBox(strength_);
    strength_->setValue(vector->strength);
    slider_->setValue(std::clamp(int(std::lround(vector->strength * 10.0f)), -kSteeringSliderTenths,
                                 kSteeringSliderTenths));
}
} // namespace headlight::app
