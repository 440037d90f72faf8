#include "analysis/attention_sinks.h"

#include "analysis/head_roles.h"
#include "analysis/output_effect.h"

#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace headlight::analysis {
namespace {

using Kind = variants::WeightRule::Kind;

CaptureRequest sinkCapture(bool logits, bool residual) {
    CaptureRequest capture;
    capture.logits = logits;
    capture.hiddenStates = residual;
    capture.residualBeforeFinalNorm = residual;
    return capture;
}

// Every layer's [H, T, T] map, stacked; refuses a depth or a map the report cannot read.
Tensor tokenMaps(const Trace& trace, int layers) {
    if (int(trace.layers.size()) != layers || trace.layersRun != layers)
        throw ModelError("sinks need every layer run once: this variant's depth depends on the "
                         "text (adaptive computation or early exit)");
    Tensor maps = trace.stackedProbabilities();
    if (maps.dim(2) != int64_t(trace.ids.size()) || maps.dim(3) != int64_t(trace.ids.size()))
        throw ModelError("sinks need token-by-token attention; this variant pools or compresses "
                         "the sequence");
    return maps;
}

// The residual stream leaving `layer`: the next layer's input, or the last block's output
// before the final norm.
const Tensor& streamLeaving(const Trace& trace, int layer, int layers) {
    return layer + 1 < layers ? trace.hiddenStates[std::size_t(layer + 1)]
                              : trace.residualBeforeFinalNorm;
}

// Clean rows from `cleanFirst` against ablated rows from 0, `count` of them.
void compareLogits(const Tensor& clean, int64_t cleanFirst, const Tensor& ablated, int64_t count,
                   SinkAblation& out) {
    const int64_t vocab = clean.dim(1);
    double kl = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        const float* p = clean.data() + (cleanFirst + i) * vocab;
        const float* q = ablated.data() + i * vocab;
        kl += klDivergence(p, q, vocab);
        out.top1Changes += topK(p, vocab, 1).front() != topK(q, vocab, 1).front();
    }
    out.positions = int(count);
    out.meanKl = count > 0 ? kl / double(count) : 0.0;
}

// What every ablated pass is run and compared with.
struct AblationContext {
    const TransformerModel& model;
    const Tensor* cleanLogits; // null without a causal LM head
    int layers;
    const PassControl& control;
};

// One ablated pass; a variant this model cannot take comes back as the row's refusal. Clean
// rows from `cleanFirst` on are compared with the ablated pass's rows from 0.
SinkAblation runAblated(const AblationContext& context, std::string id, std::string label,
                        const ModelInput& input, const variants::VariantSpec& variant,
                        const variants::Intervention& intervention, int64_t cleanFirst) {
    SinkAblation row;
    row.id = std::move(id);
    row.label = std::move(label);
    try {
        const Trace trace =
            context.model.forward(input, sinkCapture(context.cleanLogits != nullptr, false),
                                  variant, intervention, context.control);
        row.sinkShare = firstTokenShares(tokenMaps(trace, context.layers));
        if (context.cleanLogits)
            compareLogits(*context.cleanLogits, cleanFirst, trace.logits, trace.logits.dim(0), row);
    } catch (const variants::VariantError& refused) {
        row.refusal = refused.what();
    } catch (const ModelError& refused) {
        row.refusal = refused.what();
    }
    return row;
}

ModelInput withoutFirstToken(const ModelInput& input) {
    const auto rest = [](const auto& v) {
        return v.empty() ? v : std::decay_t<decltype(v)>(v.begin() + 1, v.end());
    };
    return {rest(input.ids), rest(input.tokenTypes), rest(input.attentionMask)};
}

// The attention rules a model is switched to: each one other than its variant's own.
struct RuleSwitch {
    Kind kind;
    const char* id;
    const char* label;
};
constexpr RuleSwitch kRuleSwitches[] = {
    {Kind::Softmax, "softmax", "switch the attention rule to the checkpoint's softmax"},
    {Kind::SinkSoftmax, "sink-softmax",
     "switch the attention rule to softmax with a zero sink logit (off by one)"},
    {Kind::Sigmoid, "sigmoid", "switch the attention rule to sigmoid attention (bias −ln T)"},
};
} // namespace

double meanShare(const std::vector<double>& shares) {
    return shares.empty()
               ? 0.0
               : std::accumulate(shares.begin(), shares.end(), 0.0) / double(shares.size());
}

variants::ResidualEdit zeroActivations(const std::vector<Activation>& entries, int layer,
                                       int64_t width) {
    variants::ResidualEdit edit;
    edit.layer = layer;
    edit.width = width;
    edit.name = "the zeroed massive activations";
    edit.rows = [entries, width](const Tensor& x) {
        Tensor out = x;
        for (const Activation& a : entries)
            out.data()[int64_t(a.token) * width + a.dim] = 0.0f;
        return out;
    };
    return edit;
}

namespace {

// zero-massive, drop-first, then the attention rules other than the variant's own.
std::vector<SinkAblation> ablations(const TransformerModel& model, const ModelInput& input,
                                    const variants::VariantSpec& variant, const SinkReport& report,
                                    const Trace& clean, const PassControl& control) {
    const AblationContext context{model, report.hasOutput ? &clean.logits : nullptr, report.layers,
                                  control};
    const LargestActivations& arise = report.activations[std::size_t(report.ariseLayer)];
    variants::Intervention zeroed;
    zeroed.edits.push_back(
        zeroActivations(arise.top, report.ariseLayer + 1, clean.residualBeforeFinalNorm.dim(1)));
    std::vector<SinkAblation> rows;
    rows.push_back(runAblated(context, "zero-massive",
                              "zero the " + std::to_string(arise.top.size()) +
                                  " largest activations leaving layer " +
                                  std::to_string(report.ariseLayer),
                              input, variant, zeroed, 0));
    rows.push_back(runAblated(context, "drop-first", "drop the first token",
                              withoutFirstToken(input), variant, {}, 1));
    for (const RuleSwitch& rule : kRuleSwitches) {
        if (rule.kind == variant.weightRule.kind) continue;
        variants::VariantSpec switched = variant;
        switched.weightRule = {};
        switched.weightRule.kind = rule.kind;
        rows.push_back(runAblated(context, rule.id, rule.label, input, switched, {}, 0));
    }
    return rows;
}
} // namespace

SinkReport sinkReport(const TransformerModel& model, const ModelInput& input,
                      const variants::VariantSpec& variant, int top, const PassControl& control) {
    if (input.ids.size() < 2)
        throw std::invalid_argument("sinks need a text of at least 2 tokens: with one, the first "
                                    "token is every token");
    if (top < 1) throw std::invalid_argument("--top must be at least 1");
    SinkReport report;
    report.layers = model.spec().layers;
    report.heads = model.spec().heads;
    report.tokens = int(input.ids.size());
    report.hasOutput = model.spec().causal && model.hasLmHead();
    if (!report.hasOutput)
        report.outputAbsence =
            model.hasLmHead() ? "the LM head is not causal (a masked LM)" : model.lmHeadAbsence();
    const Trace clean =
        model.forward(input, sinkCapture(report.hasOutput, true), variant, {}, control);
    report.sinkShare = firstTokenShares(tokenMaps(clean, report.layers));
    if (int(clean.hiddenStates.size()) != report.layers + 1 ||
        clean.residualBeforeFinalNorm.empty())
        throw ModelError("sinks need the residual stream leaving every layer, which this "
                         "variant's depth loop does not give");
    for (int l = 0; l < report.layers; ++l)
        report.activations.push_back(
            largestActivations(streamLeaving(clean, l, report.layers), top));
    report.ariseLayer = layerWhereLargestArise(report.activations);

    report.ablations = ablations(model, input, variant, report, clean, control);
    return report;
}
} // namespace headlight::analysis
