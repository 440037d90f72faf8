#pragma once
// Scene and lesson files (docs/scenes.md). A scene is one saved Scenario: the model (a zoo name
// or a checkpoint folder), the text, the variant spec, the view, the selection, the colour map
// and a caption. A lesson is a title, a summary and an ordered list of scenes.
//
// The parsers are strict like the variant spec's: an unknown key, a wrong type or a missing
// required key is refused with one line naming the key's path ("lesson: 'steps[2].view' must be
// a string"). Which view ids and colour maps exist is the application's knowledge, so the caller
// passes them in (SceneVocabulary); the variant object is checked by parseVariantSpec.

#include <QJsonObject>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::io {

class SceneError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct SceneSelection {
    int layer = 0;
    int head = 0;
    int query = -1;       // the emphasised query token, -1 for none
    bool average = false; // the layer's mean over heads
    bool operator==(const SceneSelection&) const = default;
};

struct Scene {
    std::string model;   // a zoo model's name, or a checkpoint folder (relative to the file)
    std::string text;    // the input text
    QJsonObject variant; // a variant spec (docs/variants.md); {} is the checkpoint as trained
    std::string view;    // a view id, as `headlight export --list-views` names them
    SceneSelection selection;
    std::string colormap = "viridis";
    std::string title;   // short heading of a lesson step (may be empty)
    std::string caption; // what a student should look at (may be empty)
    bool operator==(const Scene&) const = default;
};

struct Lesson {
    std::string title;
    std::string summary;
    std::vector<Scene> steps;
    bool operator==(const Lesson&) const = default;
};

// The names a scene may use for `view` and `colormap`.
struct SceneVocabulary {
    std::vector<std::string> views;
    std::vector<std::string> colormaps;
};

constexpr int kMaxLessonSteps = 200;
constexpr long long kMaxSceneFileBytes = 4'000'000;

Scene parseScene(const std::string& json, const SceneVocabulary& vocabulary);
Lesson parseLesson(const std::string& json, const SceneVocabulary& vocabulary);
QJsonObject sceneToJson(const Scene& scene);
QJsonObject lessonToJson(const Lesson& lesson);

// Whether a file's top level is a lesson (it has "steps"); a scene otherwise.
bool isLessonJson(const std::string& json);
// Reads a file (at most kMaxSceneFileBytes); the message names the path.
std::string readSceneFile(const std::string& path);
} // namespace headlight::io
