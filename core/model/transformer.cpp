#include "transformer.h"

#include <chrono>
#include <cmath>

#include "io/checkpoint.h"
#include "model/memory_budget.h"

namespace headlight {
namespace {

bool usesRotary(Architecture a) {
    return a == Architecture::Llama || a == Architecture::Qwen2 || a == Architecture::Mistral;
}
} // namespace

std::unique_ptr<TransformerModel> loadModel(const std::string& folder, Backend& backend) {
    ModelSpec spec = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    checkLoadBudget(checkpoint, backend.kind() == BackendKind::Cpu);
    const HostWeights weights = readWeights(checkpoint, spec);
    return std::make_unique<TransformerModel>(std::move(spec), weights, backend);
}

TransformerModel::TransformerModel(ModelSpec spec, const HostWeights& weights, Backend& backend)
    : spec_(std::move(spec)), backend_(backend), prefix_(weights.prefix) {
    tokenEmbedding_ = backend.upload(weights.tokenEmbedding);
    if (!weights.positionEmbedding.empty()) positionEmbedding_ = backend.upload(weights.positionEmbedding);
    if (!weights.tokenTypeEmbedding.empty()) tokenTypeEmbedding_ = backend.upload(weights.tokenTypeEmbedding);
    embeddingNorm_ = upload(weights.embeddingNorm);
    finalNorm_ = upload(weights.finalNorm);
    for (const HostLayer& host : weights.layers) {
        Layer layer;
        layer.query = upload(host.query);
        layer.key = upload(host.key);
        layer.value = upload(host.value);
        layer.output = upload(host.output);
        layer.up = upload(host.up);
        layer.gate = upload(host.gate);
        layer.down = upload(host.down);
        layer.attentionNorm = upload(host.attentionNorm);
        layer.ffnNorm = upload(host.ffnNorm);
        layers_.push_back(std::move(layer));
    }
}

TransformerModel::Linear TransformerModel::upload(const HostLinear& linear) const {
    Linear result;
    if (!linear.weight.empty()) result.weight = backend_.upload(linear.weight);
    if (!linear.bias.empty()) result.bias = backend_.upload(linear.bias);
    return result;
}

TransformerModel::Norm TransformerModel::upload(const HostNorm& norm) const {
    Norm result;
    if (!norm.gamma.empty()) result.gamma = backend_.upload(norm.gamma);
    if (!norm.beta.empty()) result.beta = backend_.upload(norm.beta);
    return result;
}

bool TransformerModel::preNorm() const {
    return spec_.architecture == Architecture::Gpt2 || usesRotary(spec_.architecture);
}

void TransformerModel::validate(const ModelInput& input) const {
    const std::size_t tokens = input.ids.size();
    if (tokens == 0) throw ModelError("empty input: there are no tokens to run");
    if (!input.tokenTypes.empty() && input.tokenTypes.size() != tokens)
        throw ModelError("token type ids have " + std::to_string(input.tokenTypes.size()) + " entries for " +
                         std::to_string(tokens) + " tokens");
    if (!input.attentionMask.empty() && input.attentionMask.size() != tokens)
        throw ModelError("attention mask has " + std::to_string(input.attentionMask.size()) + " entries for " +
                         std::to_string(tokens) + " tokens");
    for (int32_t id : input.ids)
        if (id < 0 || id >= spec_.vocabSize)
            throw ModelError("token id " + std::to_string(id) + " is outside the vocabulary of " +
                             std::to_string(spec_.vocabSize));
    // Why only with an embedding: models without token types (DistilBERT) ignore them, as HF does.
    const int types = spec_.typeVocabSize;
    for (int32_t type : input.tokenTypes)
        if (tokenTypeEmbedding_.valid() && (type < 0 || type >= types))
            throw ModelError("token type id " + std::to_string(type) + " is outside the model's " +
                             std::to_string(types) + " token types");
    if (positionEmbedding_.valid()) {
        const int limit = spec_.maxPositions - spec_.positionOffset;
        if (int64_t(tokens) > limit)
            throw ModelError("the sequence has " + std::to_string(tokens) + " tokens but the model takes at most " +
                             std::to_string(limit) + "; shorten the text");
    }
}

std::vector<int32_t> TransformerModel::positionIds(const ModelInput& input) const {
    std::vector<int32_t> positions(input.ids.size());
    if (spec_.architecture != Architecture::Roberta) {
        for (std::size_t t = 0; t < positions.size(); ++t) positions[t] = int32_t(t);
        return positions;
    }
    // RoBERTa (HF create_position_ids_from_input_ids): padding tokens sit at padding_idx, the others
    // count up from padding_idx + 1.
    const int32_t padding = spec_.positionOffset - 1;
    int32_t seen = 0;
    for (std::size_t t = 0; t < positions.size(); ++t) {
        const bool real = input.ids[t] != spec_.padTokenId;
        seen += real;
        positions[t] = real ? seen + padding : padding;
    }
    return positions;
}

DeviceTensor TransformerModel::embed(const ModelInput& input) const {
    const int64_t tokens = int64_t(input.ids.size()), d = spec_.hidden;
    DeviceTensor x = backend_.allocate({tokens, d});
    backend_.gatherRows(tokenEmbedding_, input.ids, x);
    if (positionEmbedding_.valid()) {
        DeviceTensor positions = backend_.allocate({tokens, d});
        backend_.gatherRows(positionEmbedding_, positionIds(input), positions);
        backend_.add(x, positions, x);
    }
    if (tokenTypeEmbedding_.valid()) {
        std::vector<int32_t> types = input.tokenTypes;
        types.resize(input.ids.size(), 0);
        DeviceTensor typeRows = backend_.allocate({tokens, d});
        backend_.gatherRows(tokenTypeEmbedding_, types, typeRows);
        backend_.add(x, typeRows, x);
    }
    if (embeddingNorm_.gamma.valid()) normalize(embeddingNorm_, x, x);
    return x;
}

void TransformerModel::normalize(const Norm& norm, const DeviceTensor& x, DeviceTensor& out) const {
    if (spec_.norm == NormKind::RmsNorm) backend_.rmsNorm(x, norm.gamma, spec_.normEps, out);
    else backend_.layerNorm(x, norm.gamma, norm.beta, spec_.normEps, out);
}

void TransformerModel::project(const Linear& linear, const DeviceTensor& x, DeviceTensor& out) const {
    backend_.linear(x, linear.weight, linear.bias.valid() ? &linear.bias : nullptr, out);
}

// Multi-head (grouped-query) self-attention of one layer: x [T, D] → [T, D].
DeviceTensor TransformerModel::attend(const Layer& layer, const DeviceTensor& x, const ModelInput& input,
                                      PendingCapture* capture) const {
    const int64_t tokens = x.dim(0), heads = spec_.heads, d = spec_.headDim;
    DeviceTensor q = backend_.allocate({tokens, heads * d});
    DeviceTensor k = backend_.allocate({tokens, spec_.kvHeads * d});
    DeviceTensor v = backend_.allocate({tokens, spec_.kvHeads * d});
    project(layer.query, x, q);
    project(layer.key, x, k);
    project(layer.value, x, v);
    if (usesRotary(spec_.architecture)) {
        const std::vector<int32_t> positions = positionIds(input);
        backend_.rope(q, spec_.heads, spec_.headDim, positions, spec_.ropeTheta);
        backend_.rope(k, spec_.kvHeads, spec_.headDim, positions, spec_.ropeTheta);
    }
    AttentionParams params;
    params.heads = spec_.heads;
    params.kvHeads = spec_.kvHeads;
    params.headDim = spec_.headDim;
    params.scale = spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(d)) : 1.0f;
    params.causal = spec_.causal;
    params.slidingWindow = spec_.slidingWindow.value_or(0);
    params.keyValid = input.attentionMask;

    DeviceTensor context = backend_.allocate({tokens, heads * d});
    DeviceTensor* scores = capture && capture->scores.valid() ? &capture->scores : nullptr;
    DeviceTensor* probs = capture && capture->probabilities.valid() ? &capture->probabilities : nullptr;
    backend_.attention(q, k, v, params, context, scores, probs);

    DeviceTensor out = backend_.allocate({tokens, spec_.hidden});
    project(layer.output, context, out);
    return out;
}

// Position-wise feed-forward: x [T, D] → [T, D]; gated (SwiGLU) when the layer has a gate.
DeviceTensor TransformerModel::feedForward(const Layer& layer, const DeviceTensor& x) const {
    const int64_t tokens = x.dim(0);
    DeviceTensor inner = backend_.allocate({tokens, spec_.intermediate});
    project(layer.up, x, inner);
    if (layer.gate.weight.valid()) {
        DeviceTensor gate = backend_.allocate({tokens, spec_.intermediate});
        project(layer.gate, x, gate);
        backend_.gatedActivation(gate, inner, spec_.activation, inner);
    } else {
        backend_.activation(inner, spec_.activation, inner);
    }
    DeviceTensor out = backend_.allocate({tokens, spec_.hidden});
    project(layer.down, inner, out);
    return out;
}

Trace TransformerModel::forward(const ModelInput& input, const CaptureRequest& capture) const {
    validate(input);
    for (int l : capture.layers)
        if (l < 0 || l >= spec_.layers)
            throw ModelError("layer " + std::to_string(l) + " does not exist (the model has " +
                             std::to_string(spec_.layers) + ")");
    for (int h : capture.heads)
        if (h < 0 || h >= spec_.heads)
            throw ModelError("head " + std::to_string(h) + " does not exist (the model has " +
                             std::to_string(spec_.heads) + ")");
    checkForwardBudget(spec_, int64_t(input.ids.size()), capture, backend_.kind() == BackendKind::Cpu);
    const auto start = std::chrono::steady_clock::now();
    Trace trace;
    trace.ids = input.ids;
    trace.valid = input.attentionMask.empty() ? std::vector<uint8_t>(input.ids.size(), 1) : input.attentionMask;
    trace.layers.resize(layers_.size());
    const int64_t tokens = int64_t(input.ids.size()), d = spec_.hidden;
    std::vector<DeviceTensor> hidden;
    // Why: captured tensors stay on the device until the pass is recorded, so that a Vulkan
    // backend runs the whole pass as one submission and reads back only what was asked for.
    std::vector<PendingCapture> pending(layers_.size());
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        if (!capture.wantsLayer(int(l))) continue;
        if (capture.scores) pending[l].scores = backend_.allocate({spec_.heads, tokens, tokens});
        if (capture.probabilities) pending[l].probabilities = backend_.allocate({spec_.heads, tokens, tokens});
    }

    DeviceTensor x = embed(input);
    if (capture.hiddenStates) hidden.push_back(x);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        const Layer& layer = layers_[l];
        DeviceTensor next = backend_.allocate({tokens, d});
        if (preNorm()) {
            DeviceTensor h = backend_.allocate({tokens, d});
            normalize(layer.attentionNorm, x, h);
            backend_.add(x, attend(layer, h, input, &pending[l]), next);
            normalize(layer.ffnNorm, next, h);
            backend_.add(next, feedForward(layer, h), next);
        } else {
            backend_.add(x, attend(layer, x, input, &pending[l]), next);
            normalize(layer.attentionNorm, next, next);
            DeviceTensor sum = backend_.allocate({tokens, d});
            backend_.add(next, feedForward(layer, next), sum);
            normalize(layer.ffnNorm, sum, next);
        }
        x = next;
        // Why: like HF, pre-norm models report the last layer's state only after the final norm.
        if (capture.hiddenStates && (!preNorm() || l + 1 < layers_.size())) hidden.push_back(x);
    }
    if (finalNorm_.gamma.valid()) {
        DeviceTensor normed = backend_.allocate({tokens, d});
        normalize(finalNorm_, x, normed);
        x = normed;
        if (capture.hiddenStates) hidden.push_back(x);
    }
    trace.lastHiddenState = backend_.download(x);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        LayerTrace& layer = trace.layers[l];
        if (!capture.wantsLayer(int(l))) continue;
        layer.heads = capture.heads;
        if (layer.heads.empty())
            for (int h = 0; h < spec_.heads; ++h) layer.heads.push_back(h);
        if (pending[l].scores.valid()) layer.scores = selectHeads(backend_.download(pending[l].scores), capture.heads);
        if (pending[l].probabilities.valid())
            layer.probabilities = selectHeads(backend_.download(pending[l].probabilities), capture.heads);
    }
    for (const DeviceTensor& h : hidden) trace.hiddenStates.push_back(backend_.download(h));
    trace.forwardMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return trace;
}
} // namespace headlight
