#include "query_key_analysis.h"

#include "analysis/atlas_variant.h"

namespace headlight::app {

QueryKeyAnalysis analyseQueriesKeys(const LoadedModel& model, const ModelInput& input,
                                    const variants::VariantSpec& variant,
                                    const variants::Intervention& intervention,
                                    std::vector<analysis::TokenKind> kinds) {
    QueryKeyAnalysis result;
    const ModelSpec& spec = model.model->spec();
    result.layers = spec.layers;
    result.heads = spec.heads;
    result.kinds = std::move(kinds);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.queriesKeys = true;
    Trace trace;
    try {
        trace = model.model->forward(input, capture, variant, intervention);
        // Why refuse a kernel the atlas rebuilds (sparse, LSH, linearized): its weights are not
        // a softmax of q·k over the keys, so the picture's distance would not read as attention.
        if (analysis::atlasDrawsVariant(spec, variant))
            throw ModelError("the variant's kernel changes attention");
    } catch (const ModelError&) {
        // The only refusal the main pass did not already make (same input, variant and
        // intervention); why not its message: it speaks of the atlas, which is not what is open.
        result.note = QStringLiteral(
            "The query-key embedding reads the queries and keys of exact softmax attention, and "
            "this pass's options change attention or the layer loop: turn them off to see it.");
        return result;
    }
    for (int l = 0; l < spec.layers; ++l) {
        const LayerTrace& layer = trace.layers[std::size_t(l)];
        for (int h = 0; h < spec.heads; ++h)
            result.embeddings.push_back(analysis::embedQueryKeyHead(
                layer.queries, layer.keys, spec.heads, spec.kvHeads, h, trace.valid));
    }
    return result;
}
} // namespace headlight::app
