#include "scene_render.h"

#include "backend/backend_choice.h"
#include "figure_builders.h"
#include "forward_runner.h"
#include "model_session.h"
#include "scene_files.h"

#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonDocument>

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
                                            const io::Scenario& scenario, bool withVanilla) {
    ForwardRunner runner;
    runner.setModel(model);
    runner.setVariant(io::parseScenarioVariant(scenario.variant));
    runner.setKnockouts({scenario.ablation, QString::fromStdString(scenario.ablationSource)});
    runner.setVanillaWanted(withVanilla);
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

QString variantCaption(const QJsonObject& variant) {
    return variant.isEmpty()
               ? QStringLiteral("as trained")
               : QString::fromUtf8(QJsonDocument(variant).toJson(QJsonDocument::Compact));
}
} // namespace

RenderedScene renderScenario(const io::Scenario& scenario, const QString& baseFolder,
                             const std::string& deviceSelector) {
    const QString folder = resolveSceneModel(scenario.model, baseFolder);
    const auto model = loadModelNow(folder, scenario.backend, deviceSelector);
    checkSelection(scenario.selection, model->model->spec());
    const ViewKind view = viewKindFromId(scenario.view);
    const auto result = runNow(model, scenario, view == ViewKind::Sparsity);
    const ViewState state = scenarioViewState(scenario, result->tokenCount());
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
    rendered.caption.model = QFileInfo(QDir::cleanPath(folder)).fileName();
    rendered.caption.variant = variantCaption(scenario.variant);
    rendered.caption.text = QString::fromStdString(scenario.text);
    return rendered;
}
} // namespace headlight::app
