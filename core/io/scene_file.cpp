// JSON ⇄ Scene and Lesson: a scene is the scenario's keys (io/scenario.cpp) plus a title and a
// caption, read as strictly.
#include "io/scene_file.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

namespace headlight::io {
namespace {

Scene sceneFromJson(SceneFields fields, const SceneVocabulary& vocabulary) {
    Scene scene;
    static_cast<Scenario&>(scene) = scenarioFromJson(fields, vocabulary);
    scene.title = fields.text("title", false);
    scene.caption = fields.text("caption", false);
    fields.finish();
    return scene;
}

QJsonObject parseDocument(const std::string& json, const std::string& kind) {
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
    if (error.error != QJsonParseError::NoError)
        throw SceneError(kind + ": invalid JSON at byte " + std::to_string(error.offset) + ": " +
                         error.errorString().toStdString());
    if (!document.isObject()) throw SceneError(kind + ": the top level must be an object");
    return document.object();
}
} // namespace

Scene parseScene(const std::string& json, const SceneVocabulary& vocabulary) {
    return sceneFromJson(SceneFields(parseDocument(json, "scene"), "scene", ""), vocabulary);
}

Lesson parseLesson(const std::string& json, const SceneVocabulary& vocabulary) {
    SceneFields fields(parseDocument(json, "lesson"), "lesson", "");
    Lesson lesson;
    lesson.title = fields.text("title", true);
    lesson.summary = fields.text("summary", false);
    const QJsonArray steps = fields.array("steps");
    if (steps.isEmpty()) fields.fail("steps", "is empty: a lesson needs at least one scene");
    if (steps.size() > kMaxLessonSteps)
        fields.fail("steps", "has " + std::to_string(steps.size()) + " scenes; at most " +
                                 std::to_string(kMaxLessonSteps));
    for (qsizetype i = 0; i < steps.size(); ++i) {
        const std::string where = "steps[" + std::to_string(i) + "]";
        if (!steps[i].isObject()) throw SceneError("lesson: '" + where + "' must be an object");
        lesson.steps.push_back(
            sceneFromJson(SceneFields(steps[i].toObject(), "lesson", where), vocabulary));
    }
    fields.finish();
    return lesson;
}

QJsonObject sceneToJson(const Scene& scene) {
    QJsonObject json = scenarioToJson(scene);
    if (!scene.title.empty()) json.insert("title", QString::fromStdString(scene.title));
    if (!scene.caption.empty()) json.insert("caption", QString::fromStdString(scene.caption));
    return json;
}

QJsonObject lessonToJson(const Lesson& lesson) {
    QJsonArray steps;
    for (const Scene& scene : lesson.steps)
        steps.append(sceneToJson(scene));
    QJsonObject json{{"title", QString::fromStdString(lesson.title)}, {"steps", steps}};
    if (!lesson.summary.empty()) json.insert("summary", QString::fromStdString(lesson.summary));
    return json;
}

bool isLessonJson(const std::string& json) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(json)).object().contains("steps");
}

std::string readSceneFile(const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        throw SceneError("cannot read " + path + ": " + file.errorString().toStdString());
    if (file.size() > kMaxSceneFileBytes)
        throw SceneError(path + " is larger than 4 MB: not a scene or lesson");
    return file.readAll().toStdString();
}
} // namespace headlight::io
