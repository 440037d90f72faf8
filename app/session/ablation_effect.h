#pragma once
// What knocking out heads does to the output: the pass with the head ablations of
// variants/intervention.h against the same pass without them, compared per position by
// KL(p_clean ‖ p_ablated) of the next-token distributions and by the top-1 prediction. Both
// passes read the logits of a causal model's LM head (CaptureRequest::logits).

#include "corpus_head_means.h"
#include "model/transformer.h"
#include "variants/intervention.h"

#include <vector>

namespace headlight::app {

struct PositionChange {
    double kl = 0.0;  // KL(p_clean ‖ p_ablated) in nats
    int cleanTop = 0; // the top-1 token of each pass
    int ablatedTop = 0;
    double cleanTopProbability = 0.0;   // p_clean(cleanTop)
    double ablatedTopProbability = 0.0; // p_ablated(ablatedTop)
    int topKFlips = 0; // of the clean pass's kOutputChangeTopK likeliest, how many left the other's
    bool flipped() const { return cleanTop != ablatedTop; }
};
constexpr int kOutputChangeTopK = 5;

// Per position of two logit tensors [T, V] of the same shape.
std::vector<PositionChange> outputChange(const Tensor& cleanLogits, const Tensor& ablatedLogits);

// The change over every position, as the Effect view, the knockout grid, the Features caption
// and `inspect` report it; zeros for no position.
struct OutputChangeSummary {
    double meanKl = 0.0;
    int flipped = 0; // positions whose top-1 prediction changed
    double meanTopKFlips = 0.0;
};
OutputChangeSummary summarizeOutputChange(const std::vector<PositionChange>& positions);

struct AblationEffect {
    Tensor cleanLogits, ablatedLogits; // [T, V]
    std::vector<PositionChange> positions;
};

// Whether `model` has the LM head the output change is read through; else why not (one line).
bool hasLanguageModelHead(const TransformerModel& model);
const char* noLanguageModelHeadReason();

// The replace ablations of `specs` filled with the head outputs of `source` (same length as the
// text), the mean-corpus ones with `corpusMeans`, zero and mean as they are. Throws
// variants::VariantError with the reason.
variants::Intervention resolveAblations(const TransformerModel& model,
                                        const variants::VariantSpec& variant,
                                        const std::vector<variants::HeadAblationSpec>& specs,
                                        const ModelInput* source, int64_t tokens,
                                        const CorpusHeadMeans* corpusMeans = nullptr);

// Runs `input` clean and with `intervention`. Throws ModelError when the model has no tied LM
// head, variants::VariantError for an ablation the plan refuses.
AblationEffect runAblation(const TransformerModel& model, const ModelInput& input,
                           const variants::VariantSpec& variant,
                           const variants::Intervention& intervention);
} // namespace headlight::app
