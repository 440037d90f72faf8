#include "io/scene_fields.h"

#include <algorithm>
#include <cmath>

namespace headlight::io {

SceneFields::SceneFields(QJsonObject object, std::string kind, std::string where)
    : object_(std::move(object))
    , kind_(std::move(kind))
    , where_(std::move(where)) {}

std::string SceneFields::path(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
}

bool SceneFields::has(const char* key) const {
    return object_.contains(QLatin1String(key));
}

QJsonValue SceneFields::take(const char* key) {
    taken_.insert(key);
    return object_.value(QLatin1String(key));
}

std::string SceneFields::text(const char* key, bool required, const std::string& fallback) {
    if (!has(key)) {
        if (required) fail(key, "is missing");
        return (void)take(key), fallback;
    }
    const QJsonValue v = take(key);
    if (!v.isString()) fail(key, "must be a string");
    return v.toString().toStdString();
}

int SceneFields::integer(const char* key, int fallback, int min, int max) {
    if (!has(key)) return (void)take(key), fallback;
    const QJsonValue v = take(key);
    const double d = v.toDouble(std::nan(""));
    if (!v.isDouble() || d != std::floor(d) || d < min || d > max)
        fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return int(d);
}

bool SceneFields::boolean(const char* key, bool fallback) {
    if (!has(key)) return (void)take(key), fallback;
    const QJsonValue v = take(key);
    if (!v.isBool()) fail(key, "must be true or false");
    return v.toBool();
}

QJsonObject SceneFields::object(const char* key) {
    const QJsonValue v = take(key);
    if (!v.isObject()) fail(key, "must be an object");
    return v.toObject();
}

QJsonArray SceneFields::array(const char* key) {
    if (!has(key)) fail(key, "is missing");
    const QJsonValue v = take(key);
    if (!v.isArray()) fail(key, "must be a list");
    return v.toArray();
}

std::string SceneFields::choice(const char* key, const std::vector<std::string>& known,
                                bool required, const std::string& fallback) {
    const std::string name = text(key, required, fallback);
    if (std::find(known.begin(), known.end(), name) != known.end()) return name;
    std::string list;
    for (const std::string& k : known)
        list += (list.empty() ? "" : ", ") + k;
    fail(key, "is '" + name + "'; known: " + list);
}

SceneFields SceneFields::nested(const char* key) {
    return SceneFields(object(key), kind_, path(key));
}

void SceneFields::finish() const {
    for (const QString& key : object_.keys())
        if (!taken_.count(key.toStdString()))
            throw SceneError(kind_ + ": unknown key '" + path(key.toStdString()) + "'");
}

void SceneFields::fail(const std::string& key, const std::string& why) const {
    throw SceneError(kind_ + ": '" + path(key) + "' " + why);
}
} // namespace headlight::io
