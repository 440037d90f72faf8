#pragma once
// A saved scene rendered with no window: the scene's model is loaded by the window's
// ModelSession, its text run by the window's ForwardRunner (with the vanilla pass the sparsity
// view needs), and its view built by the window's figure builders, so `headlight export --scene`
// and the tests draw what the window shows.

#include "backend/backend_choice.h"
#include "export/figure_export.h"
#include "io/scene_file.h"

#include <QString>

namespace headlight::app {

struct RenderedScene {
    render::PageContent content;
    render::FigureCaption caption;
};

// Needs a running Q(Gui)Application; waits for the load and the pass in local event loops.
// Throws io::SceneError (one line) for a model that is missing or does not load, a selection
// outside the model, a pass that fails, or a view with nothing to show.
RenderedScene renderScene(const io::Scene& scene, const QString& baseFolder,
                          const BackendChoice& choice, const std::string& deviceSelector);
} // namespace headlight::app
