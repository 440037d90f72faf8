#pragma once
// A Scenario: what one forward pass and its figure are made of. The model (a zoo name or a
// checkpoint folder), the text, the variant spec, the backend it asks for, the view, the selection
// and the colour map. The window's workspace, compare mode's B, a scene or lesson step and
// `headlight export` (with flags or --scene) each describe what they show as one, and this file
// holds its one JSON mapping (the scene keys of docs/scenes.md, less title and caption).
//
// View ids and colour map names stay strings here: which exist is the application's knowledge
// (app/figures/scene_files.cpp gives them as a SceneVocabulary), and the engine has no figures.

#include "analysis/head_roles.h"
#include "analysis/residual_edit_spec.h"
#include "backend/backend_kind.h"
#include "io/scene_fields.h"
#include "variants/intervention.h"
#include "variants/variant_spec.h"

#include <QJsonObject>
#include <optional>
#include <string>
#include <vector>

namespace headlight::io {

struct ScenarioSelection {
    int layer = 0;
    int head = 0;
    int query = -1;       // the emphasised query token, -1 for none
    bool average = false; // the layer's mean over heads
    int feature = -1;     // the Features view's feature page, -1 for the token table
    bool operator==(const ScenarioSelection&) const = default;
};

struct Scenario {
    std::string model; // a zoo model's name, or a checkpoint folder (relative to a scene file)
    // With a Hugging Face cache id or folder as `model`: the branch, tag or commit hash to open
    // (io::resolveModel's revision); empty for main, or a model that is not in the cache.
    std::string revision;
    std::string text;    // the input text
    QJsonObject variant; // a variant spec (docs/variants.md); {} is the checkpoint as trained
    std::optional<BackendKind> backend; // unset: Headlight picks (backend/backend_choice.h)
    std::string view;                   // a view id, as `headlight export --list-views` names them
    ScenarioSelection selection;
    std::string colormap = "viridis";
    // Heads knocked out in the pass (variants/intervention.h); replace ones take their output
    // from `ablationSource`, a text of the same token length.
    std::vector<variants::HeadAblationSpec> ablation;
    std::string ablationSource;
    // Edits of the residual stream in the pass: SAE features and steering vectors, by file
    // (analysis/residual_edit_spec.h; paths as given, relative to where the pass runs).
    std::vector<analysis::ResidualEditSpec> edits;
    // The SAE the Features view reads (a folder, or ORG/NAME/FOLDER of the cache); empty for none.
    // Reading changes nothing in the pass; its edits are in `edits`.
    std::string sae;
    // That SAE's corpus scan (`headlight features --scan`) and Neuronpedia labels, which the
    // feature page shows; empty for none.
    std::string saeScan;
    std::string saeLabels;
    // The head-roles view scored on generated probes instead of the text (docs/head-roles.md,
    // "In the window"); unset: on the text.
    std::optional<analysis::GeneratedProbeSet> headRoleProbes;
    bool operator==(const Scenario&) const = default;
};

// The names a scenario may use for `view` and `colormap`.
struct SceneVocabulary {
    std::vector<std::string> views;
    std::vector<std::string> colormaps;
};

// Takes the scenario's keys from `fields` (model, revision, text, variant, backend, view,
// selection, colormap, ablation, ablation_source, edits, sae, sae_scan, sae_labels,
// head_role_probes) and leaves the
// others to the caller, whose finish() refuses unknown ones. Throws SceneError naming the key's
// path.
Scenario scenarioFromJson(SceneFields& fields, const SceneVocabulary& vocabulary);
// Every key; `revision`, `backend`, `ablation`, `ablation_source`, `edits`, `sae`,
// `head_role_probes` and the selection's `feature` only when the scenario has them, so files
// saved without stay as they were.
QJsonObject scenarioToJson(const Scenario& scenario);

// A scenario's variant object, parsed by the variant spec's parser. Throws variants::VariantError.
variants::VariantSpec parseScenarioVariant(const QJsonObject& variant);
} // namespace headlight::io
