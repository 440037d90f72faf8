#include "scene_files.h"

#include "default_model.h"
#include "export/atomic_write.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>

namespace headlight::app {
namespace {

constexpr render::Colormap kSceneColormaps[] = {render::Colormap::Viridis,
                                                render::Colormap::Cividis};

void writeJson(const QString& path, const QJsonObject& json) {
    const QByteArray bytes = QJsonDocument(json).toJson(QJsonDocument::Indented);
    render::writeAtomically(path, [&](QIODevice& file) {
        if (file.write(bytes) != bytes.size()) render::failExport(path, file.errorString());
    });
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

std::string sceneModelName(const QString& folder) {
    const QString absolute = QDir(folder).absolutePath();
    const std::optional<QString> resources = resourcesFolder();
    if (resources && QFileInfo(absolute).dir() == QDir(*resources + "/models"))
        return QFileInfo(absolute).fileName().toStdString();
    return absolute.toStdString();
}

io::Scene loadScene(const QString& path) {
    return io::parseScene(io::readSceneFile(path.toStdString()), sceneVocabulary());
}

io::Lesson loadLesson(const QString& path) {
    return io::parseLesson(io::readSceneFile(path.toStdString()), sceneVocabulary());
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
} // namespace headlight::app
