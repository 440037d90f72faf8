#pragma once
// Scene and lesson files as the application uses them (the format: core/io/scene_file.h,
// docs/scenes.md): the view ids and colour maps a scene may name, where a scene's model is found,
// loading with the application's vocabulary, saving atomically, and the built-in lessons.
//
//   sceneVocabulary      every view id and the two selectable colour maps
//   resolveSceneModel    a zoo name → resources/models/NAME; a path → relative to the file
//   loadScene/loadLesson a file → Scene / Lesson, or io::SceneError with one line
//   saveSceneFile/saveLessonFile   atomically, as every export
//   builtinLessons       resources/lessons/*.json, by file name

#include "figure_builders.h"
#include "io/scene_file.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

io::SceneVocabulary sceneVocabulary();
ViewKind viewKindFromId(const std::string& id); // an id from sceneVocabulary()
render::Colormap colormapFromName(const std::string& name);
std::string colormapId(render::Colormap map);

// The checkpoint folder a scene's `model` names. A name without a slash is a zoo model
// (resources/models/NAME), else a folder relative to `baseFolder` (the scene file's folder).
// Throws io::SceneError: "scene: model 'NAME' not found (looked in A and B)".
QString resolveSceneModel(const std::string& model, const QString& baseFolder);
// What a scene saved from the window names: the zoo name for a zoo model, else the folder.
std::string sceneModelName(const QString& folder);

io::Scene loadScene(const QString& path);
io::Lesson loadLesson(const QString& path);
// Throws render::ExportError (one line) when the file cannot be written.
void saveSceneFile(const QString& path, const io::Scene& scene);
void saveLessonFile(const QString& path, const io::Lesson& lesson);

QStringList builtinLessons(); // absolute paths, sorted
} // namespace headlight::app
