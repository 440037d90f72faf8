#include "scene_files.h"

#include "default_model.h"
#include "export/atomic_write.h"
#include "io/hub_cache.h"
#include "io/tensor_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

namespace headlight::app {
namespace {

constexpr render::Colormap kSceneColormaps[] = {render::Colormap::Viridis,
                                                render::Colormap::Cividis};

// A kNN-LM variant's datastore named relative to the scene or lesson file, made absolute, as
// loadVariantSpec does for a spec file: the window and `headlight export` run from any folder.
void resolveDatastore(io::Scenario& scenario, const QString& path) {
    QJsonObject knn = scenario.variant.value(QStringLiteral("knn")).toObject();
    const QString datastore = knn.value(QStringLiteral("datastore")).toString();
    if (datastore.isEmpty() || QFileInfo(datastore).isAbsolute()) return;
    knn[QStringLiteral("datastore")] = QFileInfo(path).absoluteDir().absoluteFilePath(datastore);
    scenario.variant[QStringLiteral("knn")] = knn;
}

// An edit's SAE folder or vector file, and the SAE the Features view reads, named relative to
// the scene or lesson file, made absolute where it is there (an SAE may also be a Hugging Face
// cache id, ORG/NAME/FOLDER, left as it is).
void resolveEditFiles(io::Scenario& scenario, const QString& path) {
    const QDir folder = QFileInfo(path).absoluteDir();
    const auto resolve = [&folder](std::string& name) {
        const QString given = QString::fromStdString(name);
        if (given.isEmpty() || QFileInfo(given).isAbsolute() ||
            !QFileInfo::exists(folder.absoluteFilePath(given)))
            return;
        name = folder.absoluteFilePath(given).toStdString();
    };
    for (analysis::ResidualEditSpec& edit : scenario.edits) {
        resolve(edit.sae);
        resolve(edit.steeringVector);
    }
    resolve(scenario.sae);
    resolve(scenario.saeScan);
    resolve(scenario.saeLabels);
}

void writeJson(const QString& path, const QJsonObject& json) {
    render::writeBytesAtomically(path, QJsonDocument(json).toJson(QJsonDocument::Indented));
}
} // namespace

io::SceneVocabulary sceneVocabulary() {
    io::SceneVocabulary vocabulary;
    for (int i = 0; i < kAllViewCount; ++i)
        vocabulary.views.push_back(viewId(ViewKind(i)).toStdString());
    for (const render::Colormap map : kSceneColormaps)
        vocabulary.colormaps.push_back(colormapId(map));
    return vocabulary;
}

ViewKind viewKindFromId(const std::string& id) {
    for (int i = 0; i < kAllViewCount; ++i)
        if (viewId(ViewKind(i)).toStdString() == id) return ViewKind(i);
    return ViewKind::Heatmap;
}

render::Colormap colormapFromName(const std::string& name) {
    for (const render::Colormap map : kSceneColormaps)
        if (colormapId(map) == name) return map;
    return render::Colormap::Viridis;
}

std::string colormapId(render::Colormap map) {
    return render::colormapName(map).toStdString();
}

ViewState scenarioViewState(const io::Scenario& scenario, int tokenCount) {
    const io::ScenarioSelection& selection = scenario.selection;
    ViewState state;
    state.layer = selection.layer;
    state.head = selection.head;
    state.query = selection.query < tokenCount ? selection.query : -1;
    state.averageHeads = selection.average;
    state.colormap = colormapFromName(scenario.colormap);
    state.feature = selection.feature;
    return state;
}

void setScenarioView(io::Scenario& scenario, ViewKind view, const ViewState& state) {
    scenario.view = viewId(view).toStdString();
    scenario.selection = {state.layer, state.head, state.query, state.averageHeads, state.feature};
    scenario.colormap = colormapId(state.colormap);
    scenario.headRoleProbes =
        state.probeRoles ? std::optional(state.probeRoles->probes) : std::nullopt;
}

QString resolveSceneModel(const std::string& model, const QString& baseFolder) {
    const QString name = QString::fromStdString(model);
    QStringList looked;
    if (!name.contains(QLatin1Char('/'))) {
        const std::optional<QString> resources = resourcesFolder();
        if (resources) {
            const QString zoo = QDir(*resources + "/models").absoluteFilePath(name);
            if (QFileInfo(zoo).isDir()) return QDir(zoo).absolutePath();
            looked << QDir::toNativeSeparators(zoo);
        } else {
            looked << QStringLiteral("the zoo (no resources folder found)");
        }
    }
    const QString folder = QDir(baseFolder).absoluteFilePath(name);
    if (QFileInfo(folder).isDir()) return QDir(folder).absolutePath();
    looked << QDir::toNativeSeparators(folder);
    throw io::SceneError("scene: model '" + model + "' not found (looked in " +
                         looked.join(QStringLiteral(" and ")).toStdString() + ")");
}

QString resolveScenarioModel(const io::Scenario& scenario, const QString& baseFolder) {
    if (scenario.revision.empty()) return resolveSceneModel(scenario.model, baseFolder);
    const QString relative =
        QDir(baseFolder).absoluteFilePath(QString::fromStdString(scenario.model));
    const std::string source =
        QFileInfo(relative).isDir() ? relative.toStdString() : scenario.model;
    try {
        return QString::fromStdString(io::resolveModel(source, scenario.revision).folder);
    } catch (const io::CheckpointError& error) {
        throw io::SceneError("scene: model '" + scenario.model + "' at revision '" +
                             scenario.revision + "': " + error.what());
    }
}

std::string sceneModelName(const QString& folder) {
    const QString absolute = QDir(folder).absolutePath();
    const std::optional<QString> resources = resourcesFolder();
    if (resources && QFileInfo(absolute).dir() == QDir(*resources + "/models"))
        return QFileInfo(absolute).fileName().toStdString();
    return absolute.toStdString();
}

io::Scene loadScene(const QString& path) {
    io::Scene scene = io::parseScene(io::readSceneFile(path.toStdString()), sceneVocabulary());
    resolveDatastore(scene, path);
    resolveEditFiles(scene, path);
    return scene;
}

io::Lesson loadLesson(const QString& path) {
    io::Lesson lesson = io::parseLesson(io::readSceneFile(path.toStdString()), sceneVocabulary());
    for (io::Scene& step : lesson.steps) {
        resolveDatastore(step, path);
        resolveEditFiles(step, path);
    }
    return lesson;
}

void saveSceneFile(const QString& path, const io::Scene& scene) {
    writeJson(path, io::sceneToJson(scene));
}

void saveLessonFile(const QString& path, const io::Lesson& lesson) {
    writeJson(path, io::lessonToJson(lesson));
}

QStringList builtinLessons() {
    const std::optional<QString> resources = resourcesFolder();
    if (!resources) return {};
    const QDir lessons(*resources + "/lessons");
    QStringList paths;
    for (const QString& name :
         lessons.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        paths << lessons.absoluteFilePath(name);
    return paths;
}

VariantFile loadVariantFile(const QString& path) {
    VariantFile variant;
    variant.spec = variants::loadVariantSpec(path.toStdString());
    // Read again for the object: loadVariantSpec has checked that the file is a valid spec.
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw variants::VariantError("cannot read the variant spec " + path.toStdString());
    variant.json = QJsonDocument::fromJson(file.readAll()).object();
    return variant;
}
} // namespace headlight::app
