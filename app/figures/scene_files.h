#pragma once
// Scene and lesson files as the application uses them (the format: core/io/scene_file.h,
// docs/scenes.md): the view ids and colour maps a scene may name, where a scene's model is found,
// loading with the application's vocabulary, saving atomically, and the built-in lessons.
//
//   sceneVocabulary      every view id and the two selectable colour maps
//   scenarioViewState/setScenarioView   a Scenario's view, selection and colour map ⇄ the window's
//   resolveSceneModel    a zoo name → resources/models/NAME; a path → relative to the file
//   loadScene/loadLesson a file → Scene / Lesson, or io::SceneError with one line
//   saveSceneFile/saveLessonFile   atomically, as every export
//   builtinLessons       resources/lessons/*.json, by file name
//   loadVariantFile      a variant spec file as a scenario holds it and as the engine runs it

#include "figure_builders.h"
#include "io/scene_file.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

io::SceneVocabulary sceneVocabulary();
ViewKind viewKindFromId(const std::string& id); // an id from sceneVocabulary()
render::Colormap colormapFromName(const std::string& name);
std::string colormapId(render::Colormap map);

// What the figure builders draw for `scenario`: its selection and colour map, with a query past
// the text's last token (of `tokenCount`) as none.
ViewState scenarioViewState(const io::Scenario& scenario, int tokenCount);
// Sets the scenario's view, selection and colour map to what the window shows.
void setScenarioView(io::Scenario& scenario, ViewKind view, const ViewState& state);

// The checkpoint folder a scene's `model` names. A name without a slash is a zoo model
// (resources/models/NAME), else a folder relative to `baseFolder` (the scene file's folder).
// Throws io::SceneError: "scene: model 'NAME' not found (looked in A and B)".
QString resolveSceneModel(const std::string& model, const QString& baseFolder);
// The checkpoint folder of a scenario's `model` at its `revision`: resolveSceneModel without one;
// with one, the snapshot of that revision of the Hugging Face cache repository the model names (a
// folder relative to `baseFolder`, else a cached ORG/NAME id). Throws io::SceneError.
QString resolveScenarioModel(const io::Scenario& scenario, const QString& baseFolder);
// What a scene saved from the window names: the zoo name for a zoo model, else the folder.
std::string sceneModelName(const QString& folder);

// A kNN-LM variant's relative knn.datastore is read against the file's folder.
io::Scene loadScene(const QString& path);
io::Lesson loadLesson(const QString& path);
// Throws render::ExportError (one line) when the file cannot be written.
void saveSceneFile(const QString& path, const io::Scene& scene);
void saveLessonFile(const QString& path, const io::Lesson& lesson);

QStringList builtinLessons(); // absolute paths, sorted

// A variant spec file (`--variant`, compare mode's "Spec file…"): its JSON object for a scenario,
// and the spec as variants::loadVariantSpec reads it (a kNN datastore next to the file).
struct VariantFile {
    QJsonObject json;
    variants::VariantSpec spec;
};
// Throws variants::VariantError, as loadVariantSpec.
VariantFile loadVariantFile(const QString& path);
} // namespace headlight::app
