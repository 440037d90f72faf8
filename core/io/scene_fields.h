#pragma once
// One JSON object of a scenario, scene or lesson file, read key by key: each accessor takes a key
// and checks its type and range, and finish() refuses whatever was not taken. Every message is
// one line naming the file kind and the key's path ("lesson: 'steps[2].view' must be a string").

#include <QJsonArray>
#include <QJsonObject>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::io {

// A malformed scenario, scene or lesson, or a scene whose model or selection does not fit.
class SceneError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class SceneFields {
public:
    // `kind` starts every message ("scene", "lesson"); `where` is the object's own path
    // ("steps[2]"), empty at the top level.
    SceneFields(QJsonObject object, std::string kind, std::string where);

    std::string path(const std::string& key) const;
    bool has(const char* key) const;
    QJsonValue take(const char* key);
    std::string text(const char* key, bool required, const std::string& fallback = {});
    int integer(const char* key, int fallback, int min, int max);
    bool boolean(const char* key, bool fallback);
    QJsonObject object(const char* key);
    QJsonArray array(const char* key);
    // A string that must be one of `known`; the message lists them.
    std::string choice(const char* key, const std::vector<std::string>& known, bool required,
                       const std::string& fallback = {});
    // The object at `key`, read with the same kind and its path below this one.
    SceneFields nested(const char* key);
    void finish() const;
    [[noreturn]] void fail(const std::string& key, const std::string& why) const;
    const std::string& kind() const { return kind_; }

private:
    QJsonObject object_;
    std::string kind_;
    std::string where_;
    std::set<std::string> taken_;
};
} // namespace headlight::io
