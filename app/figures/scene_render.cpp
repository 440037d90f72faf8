#include "scene_render.h"

#include "backend/backend_choice.h"
#include "counted.h"
#include "figure_builders.h"
#include "forward_runner.h"
#include "model_session.h"
#include "scene_files.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QJsonArray>

namespace headlight::app {
namespace {

std::shared_ptr<const LoadedModel> loadModelNow(const QString& folder,
                                                std::optional<BackendKind> backend,
                                                const std::string& deviceSelector) {
    ModelSession session;
    QEventLoop loop;
    QString failure;
    QObject::connect(&session, &ModelSession::loaded, &loop, &QEventLoop::quit);
    QObject::connect(&session, &ModelSession::failed, &loop,
                     [&](const QString&, const QString& reason) {
                         failure = reason.section(QLatin1Char('\n'), 0, 0);
                         loop.quit();
                     });
    session.load(folder, chooseBackend(backend, deviceSelector), deviceSelector);
    loop.exec();
    if (!failure.isEmpty())
        throw io::SceneError("scene: cannot open the model " + folder.toStdString() + ": " +
                             failure.toStdString());
    return session.shared();
}

std::shared_ptr<const ForwardResult> runNow(const std::shared_ptr<const LoadedModel>& model,
                                            const io::Scenario& scenario,
                                            const PassExtras& extras) {
    ForwardRunner runner;
    runner.setModel(model);
    runner.setVariant(io::parseScenarioVariant(scenario.variant));
    runner.setKnockouts(
        {scenario.ablation, QString::fromStdString(scenario.ablationSource), {}, scenario.edits});
    if (!scenario.sae.empty()) try {
            runner.setSae(attachScenarioSae(scenario));
        } catch (const std::exception& refused) {
            throw io::SceneError(std::string("scene: ") + refused.what());
        }
    runner.setExtras(extras);
    QEventLoop loop;
    std::shared_ptr<const ForwardResult> result;
    QString failure;
    QObject::connect(&runner, &ForwardRunner::finished, &loop,
                     [&](std::shared_ptr<const ForwardResult> r) {
                         result = std::move(r);
                         loop.quit();
                     });
    QObject::connect(&runner, &ForwardRunner::failed, &loop, [&](const QString& reason) {
        failure = reason;
        loop.quit();
    });
    runner.runNow(QString::fromStdString(scenario.text));
    loop.exec();
    if (!result) throw io::SceneError("scene: the forward pass failed: " + failure.toStdString());
    if (result->tokenCount() == 0) throw io::SceneError("scene: 'text' produced no tokens");
    return result;
}

void checkSelection(const io::ScenarioSelection& selection, const ModelSpec& spec) {
    const auto check = [](const char* key, int value, int64_t count, const char* what) {
        if (value >= count)
            throw io::SceneError("scene: 'selection." + std::string(key) + "' " +
                                 std::to_string(value) + " is out of range: the model has " +
                                 std::to_string(count) + " " + what + " (0 to " +
                                 std::to_string(count - 1) + ")");
    };
    check("layer", selection.layer, spec.layers, "layers");
    check("head", selection.head, spec.heads, "heads");
}

// The variant spec as a caption: its options flattened, e.g. "mask.preset = longformer,
// mask.window = 2" (matrices shortened to their size).
QString variantCaption(const QJsonObject& spec, const QString& prefix = {}) {
    QStringList parts;
    for (auto it = spec.begin(); it != spec.end(); ++it) {
        const QString key = prefix + it.key();
        if (it->isObject())
            parts << variantCaption(it->toObject(), key + QLatin1Char('.'));
        else if (it->isArray())
            parts << QStringLiteral("%1 = [%2 values]").arg(key).arg(it->toArray().size());
        else
            parts << QStringLiteral("%1 = %2").arg(key, it->toVariant().toString());
    }
    return parts.isEmpty() && prefix.isEmpty() ? QStringLiteral("as trained")
                                               : parts.join(QStringLiteral(", "));
}
} // namespace

RenderedScene renderScenario(const io::Scenario& scenario, const QString& baseFolder,
                             const std::string& deviceSelector) {
    const QString folder = resolveScenarioModel(scenario, baseFolder);
    const auto model = loadModelNow(folder, scenario.backend, deviceSelector);
    checkSelection(scenario.selection, model->model->spec());
    const ViewKind view = viewKindFromId(scenario.view);
    const auto result = runNow(model, scenario, viewRow(view).needs);
    ViewState state = scenarioViewState(scenario, result->tokenCount());
    // Why here and not in the pass: probes are the head-roles view's alone, and the window
    // scores them in a job of their own.
    if (scenario.headRoleProbes && view == ViewKind::HeadRoles) try {
            state.probeRoles =
                scoreGeneratedProbes(*model, *scenario.headRoleProbes, result->variant, {});
        } catch (const std::exception& error) {
            throw io::SceneError(std::string("scene: head_role_probes: ") + error.what());
        }
    RenderedScene rendered;
    rendered.model = model;
    if (isPanelView(view)) {
        rendered.content = buildPanels(view, result.get(), state);
    } else {
        render::Figure figure = buildFigure(view, result.get(), state);
        if (const auto* empty = std::get_if<render::EmptyFigure>(&figure))
            throw io::SceneError("scene: nothing to show: " + empty->message.toStdString());
        rendered.content = std::move(figure);
    }
    rendered.caption = scenarioCaption(scenario, *model);
    return rendered;
}

namespace {

// "steering vector capitals.safetensors × 2", "SAE blocks.1 (clamp 3 = 0, splice with-error)".
QString editCaption(const analysis::ResidualEditSpec& edit) {
    if (edit.sae.empty())
        return QStringLiteral("steering vector %1 × %2")
            .arg(QFileInfo(QString::fromStdString(edit.steeringVector)).fileName())
            .arg(double(edit.strength), 0, 'g', 3);
    QStringList parts;
    for (const analysis::FeatureValue& clamp : edit.features.clamps)
        parts << QStringLiteral("clamp %1 = %2")
                     .arg(clamp.feature)
                     .arg(double(clamp.value), 0, 'g', 3);
    for (const analysis::FeatureValue& steer : edit.features.steers)
        parts << QStringLiteral("steer %1 × %2")
                     .arg(steer.feature)
                     .arg(double(steer.value), 0, 'g', 3);
    if (edit.features.splice != analysis::SaeSplice::None)
        parts << QStringLiteral("splice %1").arg(analysis::saeSpliceName(edit.features.splice));
    return QStringLiteral("SAE %1 (%2)")
        .arg(QFileInfo(QString::fromStdString(edit.sae)).fileName(),
             parts.join(QStringLiteral(", ")));
}
} // namespace

render::FigureCaption scenarioCaption(const io::Scenario& scenario, const LoadedModel& model) {
    const ModelSpec& spec = model.model->spec();
    // Why the edits beside the variant: a figure of an edited pass must say so on its face, not
    // only in its provenance.
    QString variant = variantCaption(scenario.variant);
    for (const analysis::ResidualEditSpec& edit : scenario.edits)
        variant += QStringLiteral(" + ") + editCaption(edit);
    return {QStringLiteral("%1 (%2, %3 × %4)")
                .arg(model.name(), QString::fromLatin1(architectureName(spec.architecture)),
                     counted(spec.layers, QStringLiteral("layer")),
                     counted(spec.heads, QStringLiteral("head"))),
            variant, QString::fromStdString(scenario.text)};
}
} // namespace headlight::app
