#pragma once
// A scenario (a saved scene's) rendered with no window: its model is loaded by the window's
// ModelSession on the backend it asks for, its text run by the window's ForwardRunner (with the
// vanilla pass the sparsity view needs), and its view built by the window's figure builders, so
// `headlight export --scene` and the tests draw what the window shows.

#include "export/figure_export.h"
#include "io/scenario.h"

#include <QString>
#include <memory>

namespace headlight::app {

struct LoadedModel;

struct RenderedScene {
    render::PageContent content;
    render::FigureCaption caption;
    std::shared_ptr<const LoadedModel> model; // what ran it, for the export's provenance
};

// Needs a running Q(Gui)Application; waits for the load and the pass in local event loops.
// Throws io::SceneError (one line) for a model that is missing or does not load, a selection
// outside the model, a pass that fails, or a view with nothing to show.
// `baseFolder` is where a relative model folder starts (the scene file's folder).
RenderedScene renderScenario(const io::Scenario& scenario, const QString& baseFolder,
                             const std::string& deviceSelector);

// The caption of a scenario's figure, for the window's exports and `headlight export --scene` or
// `--scenario` alike, so that `headlight reproduce` redraws a window export pixel for pixel: the
// model's name, architecture and size ("bert (bert, 2 layers × 2 heads)"), the variant spec's
// options flattened ("mask.preset = longformer, mask.window = 2"; "as trained" for none) and the
// text.
render::FigureCaption scenarioCaption(const io::Scenario& scenario, const LoadedModel& model);
} // namespace headlight::app
