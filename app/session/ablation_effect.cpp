#include "ablation_effect.h"

#include "analysis/output_effect.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

// log softmax of one row, in double (the KL of nearly equal distributions is a small difference).
std::vector<double> logSoftmax(const float* logits, int64_t vocab) {
    double top = logits[0];
    for (int64_t v = 1; v < vocab; ++v)
        top = std::max(top, double(logits[v]));
    double sum = 0.0;
    for (int64_t v = 0; v < vocab; ++v)
        sum += std::exp(double(logits[v]) - top);
    const double logSum = top + std::log(sum);
    std::vector<double> out(static_cast<std::size_t>(vocab));
    for (int64_t v = 0; v < vocab; ++v)
        out[std::size_t(v)] = double(logits[v]) - logSum;
    return out;
}

int argmax(const std::vector<double>& values) {
    return int(std::max_element(values.begin(), values.end()) - values.begin());
}
} // namespace

std::vector<PositionChange> outputChange(const Tensor& cleanLogits, const Tensor& ablatedLogits) {
    if (cleanLogits.shape() != ablatedLogits.shape() || cleanLogits.rank() != 2)
        throw std::invalid_argument("the two passes' logits differ in shape");
    const int64_t tokens = cleanLogits.dim(0), vocab = cleanLogits.dim(1);
    std::vector<PositionChange> changes;
    for (int64_t t = 0; t < tokens; ++t) {
        const std::vector<double> p = logSoftmax(cleanLogits.data() + t * vocab, vocab);
        const std::vector<double> q = logSoftmax(ablatedLogits.data() + t * vocab, vocab);
        PositionChange change;
        for (int64_t v = 0; v < vocab; ++v)
            change.kl += std::exp(p[std::size_t(v)]) * (p[std::size_t(v)] - q[std::size_t(v)]);
        change.cleanTop = argmax(p);
        change.ablatedTop = argmax(q);
        change.cleanTopProbability = std::exp(p[std::size_t(change.cleanTop)]);
        change.ablatedTopProbability = std::exp(q[std::size_t(change.ablatedTop)]);
        const int k = int(std::min<int64_t>(kOutputChangeTopK, vocab));
        const std::vector<int32_t> cleanTopK =
            analysis::topK(cleanLogits.data() + t * vocab, vocab, k);
        const std::vector<int32_t> changedTopK =
            analysis::topK(ablatedLogits.data() + t * vocab, vocab, k);
        for (int32_t id : cleanTopK)
            change.topKFlips += std::count(changedTopK.begin(), changedTopK.end(), id) ? 0 : 1;
        changes.push_back(change);
    }
    return changes;
}

OutputChangeSummary summarizeOutputChange(const std::vector<PositionChange>& positions) {
    OutputChangeSummary summary;
    if (positions.empty()) return summary;
    for (const PositionChange& c : positions) {
        summary.meanKl += c.kl;
        summary.flipped += c.flipped() ? 1 : 0;
        summary.meanTopKFlips += c.topKFlips;
    }
    summary.meanKl /= double(positions.size());
    summary.meanTopKFlips /= double(positions.size());
    return summary;
}

bool hasLanguageModelHead(const TransformerModel& model) {
    return model.spec().causal && model.hasLmHead();
}

const char* noLanguageModelHeadReason() {
    return "this checkpoint has no causal LM head, so the output change cannot be read";
}

variants::Intervention resolveAblations(const TransformerModel& model,
                                        const variants::VariantSpec& variant,
                                        const std::vector<variants::HeadAblationSpec>& specs,
                                        const ModelInput* source, int64_t tokens,
                                        const CorpusHeadMeans* corpusMeans) {
    variants::Intervention intervention;
    Trace sourceTrace;
    for (const variants::HeadAblationSpec& spec : specs) {
        variants::HeadAblation ablation{spec, {}};
        if (spec.mode == variants::AblationMode::CorpusMean) {
            if (!corpusMeans)
                throw variants::VariantError("mean-corpus ablations need a corpus of texts");
            const ModelSpec& shape = model.spec();
            if (corpusMeans->means.shape() !=
                std::vector<int64_t>{shape.layers, shape.heads, shape.headDim})
                throw variants::VariantError("the corpus means were computed for another model");
            if (spec.layer >= 0 && spec.layer < shape.layers && spec.head >= 0 &&
                spec.head < shape.heads)
                ablation.replacement = headMean(*corpusMeans, spec.layer, spec.head);
        }
        if (spec.mode == variants::AblationMode::Replace) {
            if (!source) throw variants::VariantError("replace ablations need a source text");
            if (int64_t(source->ids.size()) != tokens)
                throw variants::VariantError("the source text has " +
                                             std::to_string(source->ids.size()) +
                                             " tokens and the text " + std::to_string(tokens) +
                                             "; replace needs the same length");
            if (sourceTrace.layers.empty()) {
                CaptureRequest capture;
                capture.probabilities = false;
                capture.headOutputs = true;
                sourceTrace = model.forward(*source, capture, variant);
            }
            const auto layer = std::size_t(std::clamp(spec.layer, 0, model.spec().layers - 1));
            const Tensor& outputs = sourceTrace.layers[layer].headOutputs;
            const int64_t head = std::clamp<int64_t>(spec.head, 0, outputs.dim(0) - 1);
            const int64_t size = outputs.dim(1) * outputs.dim(2);
            const float* first = outputs.data() + head * size;
            ablation.replacement =
                Tensor({outputs.dim(1), outputs.dim(2)}, std::vector<float>(first, first + size));
        }
        intervention.heads.push_back(std::move(ablation));
    }
    return intervention;
}

AblationEffect runAblation(const TransformerModel& model, const ModelInput& input,
                           const variants::VariantSpec& variant,
                           const variants::Intervention& intervention) {
    if (!hasLanguageModelHead(model)) throw ModelError(noLanguageModelHeadReason());
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = true;
    AblationEffect effect;
    effect.ablatedLogits = model.forward(input, capture, variant, intervention).logits;
    effect.cleanLogits = model.forward(input, capture, variant).logits;
    effect.positions = outputChange(effect.cleanLogits, effect.ablatedLogits);
    return effect;
}
} // namespace headlight::app
