#pragma once
// The Features view's numbers for one pass (docs/features.md, "In the window"): the attached
// SAE's encoding of the activations at its hook, the reconstruction quality on the text, the
// cross-entropy with the reconstruction spliced in and with the hook zeroed, and, per feature,
// the tokens its decoder row promotes and suppresses through the unembedding (W_dec[f]·W_U).
//
//   attachSae          reads an SAE folder once, when the user attaches it
//   analyseFeatures    on the pass's worker thread, after the pass
//   strongestFeatures  a token's top-k features, as `headlight features` prints them

#include "analysis/sae_hook.h"
#include "io/sae_folder.h"
#include "io/scenario.h"
#include "model/pass_control.h"
#include "model/trace.h"
#include "model/transformer.h"
#include "variants/intervention.h"
#include "variants/variant_spec.h"

#include <QString>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace headlight::app {

struct LoadedModel;
struct FeatureScan;
struct FeatureLabels;

// An SAE the window (or `headlight export --sae`) reads features with.
struct AttachedSae {
    QString folder;    // as the user named it: a folder, or ORG/NAME/FOLDER of the cache
    QString resolved;  // the folder read
    io::SaeFolder sae; // read once
    // Top contexts over a corpus (feature_scan.h) and a Neuronpedia export's descriptions
    // (feature_labels.h), once the user scanned or opened them; else null. Set through
    // withFeatureNotes, which refuses a scan of another width.
    std::shared_ptr<const FeatureScan> scan;
    std::shared_ptr<const FeatureLabels> labels;
    QString name() const; // the folder's own name, e.g. "pre_ln"
};

// Reads `folder` (io::readSaeFolder, a cache id resolved first). Throws std::exception with a
// one-line reason.
std::shared_ptr<const AttachedSae> attachSae(const QString& folder);

// `sae` with `scan` and `labels` where given (null keeps what it had). Throws
// std::invalid_argument when the scan counts another number of features than the SAE has.
std::shared_ptr<const AttachedSae> withFeatureNotes(const std::shared_ptr<const AttachedSae>& sae,
                                                    std::shared_ptr<const FeatureScan> scan,
                                                    std::shared_ptr<const FeatureLabels> labels);

// The SAE `scenario` names (its `sae`), with its `sae_scan` and `sae_labels` where given. Throws
// std::exception with a one-line reason that names the key.
std::shared_ptr<const AttachedSae> attachScenarioSae(const io::Scenario& scenario);

// What the Features view says while no SAE is attached: how to attach one, in one sentence.
QString noSaeNote();

// The SAE of resources/saes named after a zoo model's folder, if one ships; else empty.
QString zooSaeFor(const QString& modelFolder);

struct FeatureActivation {
    int feature = 0;
    float activation = 0.0f;
};

// The `k` strongest features of row `token` of `features` [T, d_sae] among those that fire
// (activation ≠ 0), strongest first, ties by id.
std::vector<FeatureActivation> strongestFeatures(const Tensor& features, int64_t token, int k);
// How many features of that row fire.
int firingFeatures(const Tensor& features, int64_t token);

// The tokens a decoder row pushes up and down through the unembedding, strongest first.
struct DirectLogits {
    std::vector<int32_t> promoted, suppressed;
    std::vector<float> promotedLogits, suppressedLogits; // W_dec[f]·W_U at those tokens
};
constexpr int kDirectLogitTokens = 10;

struct FeatureAnalysis {
    std::shared_ptr<const AttachedSae> sae;
    analysis::SaeEncoding encoding; // features [T, d_sae] of the hook's activations on the text
    analysis::ReconstructionQuality quality;
    double encodeMs = 0.0;
    // Mean next-token cross-entropy in nats over the text's T − 1 predictions: the pass as run,
    // with the reconstruction replacing the activations at the hook (SAELens's splice without
    // the error term), and with them zeroed. Unset when `lossNote` says why.
    std::optional<double> lossClean, lossSpliced, lossZeroed;
    QString lossNote;
    // Per feature its direct logit effect; for every feature when d_sae × vocabulary is small
    // enough, else for the features that rank among a token's strongest. Empty when `logitsNote`
    // says why.
    std::map<int, DirectLogits> directLogits;
    QString logitsNote;
};

// Which hook the SAE reads on this model; throws std::invalid_argument for a hook the model lacks
// or a width it does not give there.
analysis::SaeHook saeHookOn(const ModelSpec& spec, const io::SaeConfig& config);

// The features of the pass of `input` with `variant` and `intervention` (the user's knockouts
// and edits), on the calling thread. Throws std::exception with a one-line reason for an SAE the
// model cannot feed (its hook or width); `control` cancels between layers.
FeatureAnalysis analyseFeatures(const LoadedModel& model, const ModelInput& input,
                                const variants::VariantSpec& variant,
                                const variants::Intervention& intervention,
                                const std::shared_ptr<const AttachedSae>& sae,
                                const PassControl& control);

// The direct logit effect of rows `features` of `sae`'s decoder through `model`'s unembedding.
// Throws ModelError for a model without a linear LM head.
std::map<int, DirectLogits> directLogitsOf(const TransformerModel& model,
                                           const analysis::SparseAutoencoder& sae,
                                           const std::vector<int>& features);

// Mean next-token cross-entropy of `logits` [T, V] on `ids` (positions 0 … T − 2 predicting the
// next id), in nats.
double nextTokenLoss(const Tensor& logits, const std::vector<int32_t>& ids);
} // namespace headlight::app
