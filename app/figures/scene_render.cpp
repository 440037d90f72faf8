#include "scene_render.h"

#include "figure_builders.h"
#include "forward_runner.h"
#include "model_session.h"
#include "scene_files.h"
#include "variants/variant_spec.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QJsonDocument>

namespace headlight::app {
namespace {

std::shared_ptr<const LoadedModel> loadModelNow(const QString& folder, const BackendChoice& choice,
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
    session.load(folder, choice, deviceSelector);
    loop.exec();
    if (!failure.isEmpty())
        throw io::SceneError("scene: cannot open the model " + folder.toStdString() + ": " +
                             failure.toStdString());
    return session.shared();
}

std::shared_ptr<const ForwardResult> runNow(const std::shared_ptr<const LoadedModel>& model,
                                            const io::Scene& scene, bool withVanilla) {
    ForwardRunner runner;
    runner.setModel(model);
    runner.setVariant(
        variants::parseVariantSpec(QJsonDocument(scene.variant).toJson().toStdString()));
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
    runner.runNow(QString::fromStdString(scene.text));
    loop.exec();
    if (!result) throw io::SceneError("scene: the forward pass failed: " + failure.toStdString());
    if (result->tokenCount() == 0) throw io::SceneError("scene: 'text' produced no tokens");
    return result;
}

void checkSelection(const io::SceneSelection& selection, const ModelSpec& spec) {
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

RenderedScene renderScene(const io::Scene& scene, const QString& baseFolder,
                          const BackendChoice& choice, const std::string& deviceSelector) {
    const QString folder = resolveSceneModel(scene.model, baseFolder);
    const auto model = loadModelNow(folder, choice, deviceSelector);
    checkSelection(scene.selection, model->model->spec());
    const ViewKind view = viewKindFromId(scene.view);
    const auto result = runNow(model, scene, view == ViewKind::Sparsity);
    ViewState state;
    state.layer = scene.selection.layer;
    state.head = scene.selection.head;
    state.query = scene.selection.query < result->tokenCount() ? scene.selection.query : -1;
    state.averageHeads = scene.selection.average;
    state.colormap = colormapFromName(scene.colormap);
    RenderedScene rendered;
    if (isPanelView(view)) {
        rendered.content = buildPanels(view, result.get(), state);
    } else {
        render::Figure figure = buildFigure(view, result.get(), state);
        if (const auto* empty = std::get_if<render::EmptyFigure>(&figure))
            throw io::SceneError("scene: nothing to show: " + empty->message.toStdString());
        rendered.content = std::move(figure);
    }
    rendered.caption.model = QFileInfo(folder).fileName();
    rendered.caption.variant = variantCaption(scene.variant);
    rendered.caption.text = QString::fromStdString(scene.text);
    return rendered;
}
} // namespace headlight::app
