// JSON ⇄ Scene and Lesson. Strict on purpose, as the variant spec: a misspelt key in a lesson
// would otherwise silently show a class the wrong head or the vanilla model.
#include "io/scene_file.h"

#include "variants/variant_spec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>
#include <set>

namespace headlight::io {
namespace {

constexpr int kMaxIndex = 1'000'000;

// One JSON object whose keys are taken one by one; finish() refuses whatever was not taken.
class Fields {
public:
    Fields(QJsonObject object, std::string kind, std::string where)
        : object_(std::move(object))
        , kind_(std::move(kind))
        , where_(std::move(where)) {}

    std::string path(const std::string& key) const {
        return where_.empty() ? key : where_ + "." + key;
    }
    bool has(const char* key) const { return object_.contains(QLatin1String(key)); }

    QJsonValue take(const char* key) {
        taken_.insert(key);
        return object_.value(QLatin1String(key));
    }
    std::string text(const char* key, bool required, const std::string& fallback = {}) {
        if (!has(key)) {
            if (required) fail(key, "is missing");
            return (void)take(key), fallback;
        }
        const QJsonValue v = take(key);
        if (!v.isString()) fail(key, "must be a string");
        return v.toString().toStdString();
    }
    int integer(const char* key, int fallback, int min, int max) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || d < min || d > max)
            fail(key,
                 "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
        return int(d);
    }
    bool boolean(const char* key, bool fallback) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        if (!v.isBool()) fail(key, "must be true or false");
        return v.toBool();
    }
    QJsonObject object(const char* key) {
        const QJsonValue v = take(key);
        if (!v.isObject()) fail(key, "must be an object");
        return v.toObject();
    }
    QJsonArray array(const char* key) {
        if (!has(key)) fail(key, "is missing");
        const QJsonValue v = take(key);
        if (!v.isArray()) fail(key, "must be a list");
        return v.toArray();
    }
    std::string choice(const char* key, const std::vector<std::string>& known, bool required,
                       const std::string& fallback = {}) {
        const std::string name = text(key, required, fallback);
        if (std::find(known.begin(), known.end(), name) != known.end()) return name;
        std::string list;
        for (const std::string& k : known)
            list += (list.empty() ? "" : ", ") + k;
        fail(key, "is '" + name + "'; known: " + list);
    }
    void finish() const {
        for (const QString& key : object_.keys())
            if (!taken_.count(key.toStdString()))
                throw SceneError(kind_ + ": unknown key '" + path(key.toStdString()) + "'");
    }
    [[noreturn]] void fail(const std::string& key, const std::string& why) const {
        throw SceneError(kind_ + ": '" + path(key) + "' " + why);
    }
    const std::string& kind() const { return kind_; }

private:
    QJsonObject object_;
    std::string kind_;
    std::string where_;
    std::set<std::string> taken_;
};

SceneSelection parseSelection(Fields fields) {
    SceneSelection selection;
    selection.layer = fields.integer("layer", 0, 0, kMaxIndex);
    selection.head = fields.integer("head", 0, 0, kMaxIndex);
    selection.query = fields.integer("query", -1, -1, kMaxIndex);
    selection.average = fields.boolean("average", false);
    fields.finish();
    return selection;
}

QJsonObject checkedVariant(Fields& fields) {
    if (!fields.has("variant")) return (void)fields.take("variant"), QJsonObject{};
    const QJsonObject variant = fields.object("variant");
    try {
        variants::parseVariantSpec(
            QJsonDocument(variant).toJson(QJsonDocument::Compact).toStdString());
    } catch (const variants::VariantError& error) {
        fields.fail("variant", std::string("is not a valid variant spec (") + error.what() + ")");
    }
    return variant;
}

Scene parseSceneFields(Fields fields, const SceneVocabulary& vocabulary) {
    Scene scene;
    scene.model = fields.text("model", true);
    if (scene.model.empty())
        fields.fail("model", "is empty: name a zoo model or a checkpoint folder");
    scene.text = fields.text("text", true);
    scene.variant = checkedVariant(fields);
    scene.view = fields.choice("view", vocabulary.views, true);
    if (fields.has("selection"))
        scene.selection = parseSelection(
            Fields(fields.object("selection"), fields.kind(), fields.path("selection")));
    else
        fields.take("selection");
    scene.colormap = fields.choice("colormap", vocabulary.colormaps, false, scene.colormap);
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
    return parseSceneFields(Fields(parseDocument(json, "scene"), "scene", ""), vocabulary);
}

Lesson parseLesson(const std::string& json, const SceneVocabulary& vocabulary) {
    Fields fields(parseDocument(json, "lesson"), "lesson", "");
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
            parseSceneFields(Fields(steps[i].toObject(), "lesson", where), vocabulary));
    }
    fields.finish();
    return lesson;
}

QJsonObject sceneToJson(const Scene& scene) {
    QJsonObject selection{{"layer", scene.selection.layer},
                          {"head", scene.selection.head},
                          {"query", scene.selection.query},
                          {"average", scene.selection.average}};
    QJsonObject json{{"model", QString::fromStdString(scene.model)},
                     {"text", QString::fromStdString(scene.text)},
                     {"variant", scene.variant},
                     {"view", QString::fromStdString(scene.view)},
                     {"selection", selection},
                     {"colormap", QString::fromStdString(scene.colormap)}};
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
