#pragma once
// Scene and lesson files (docs/scenes.md). A scene is one saved Scenario (io/scenario.h) with a
// title and a caption. A lesson is a title, a summary and an ordered list of scenes.
//
// The parsers are strict like the variant spec's: an unknown key, a wrong type or a missing
// required key is refused with one line naming the key's path ("lesson: 'steps[2].view' must be
// a string"). Which view ids and colour maps exist is the application's knowledge, so the caller
// passes them in (SceneVocabulary); the variant object is checked by parseVariantSpec.

#include "io/scenario.h"

#include <QJsonObject>
#include <string>
#include <vector>

namespace headlight::io {

struct Scene : Scenario {
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
