#include "transformer.h"

#include "backend/key_mask.h"
#include "io/checkpoint.h"
#include "model/capture_limit.h"
#include "model/memory_budget.h"
#include "model/model_family.h"
#include "variants/atlas_attention.h"
#include "variants/early_exit.h"
#include "variants/position_bias.h"
#include "variants/variant_merge.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace headlight {

std::unique_ptr<TransformerModel> loadModel(const std::string& folder, Backend& backend) {
    ModelSpec spec = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    checkLoadBudget(checkpoint, spec, backend.kind() == BackendKind::Cpu);
    if (const auto device = backend.deviceMemory())
        checkDeviceLoadBudget(checkpoint, spec, *device, keepsWeights16Bit(backend));
    const HostWeights weights = readWeights(checkpoint, spec);
    return std::make_unique<TransformerModel>(std::move(spec), weights, backend);
}

namespace {
// The wiring of a Hugging Face architecture in the zoo's terms, so one stack serves both.
variants::BlockSpec hfBlock(const ModelSpec& spec) {
    variants::BlockSpec block;
    block.placement =
        spec.preNorm ? variants::BlockSpec::Placement::Pre : variants::BlockSpec::Placement::Post;
    block.norm = spec.norm == NormKind::RmsNorm ? variants::BlockSpec::Norm::Rms : variants::BlockSpec::Norm::Layer;
    return block;
}
} // namespace

TransformerModel::TransformerModel(ModelSpec spec, const HostWeights& weights, Backend& backend)
    : spec_(std::move(spec)), backend_(backend) {
    block_ = spec_.zoo.block ? *spec_.zoo.block : hfBlock(spec_);
    tokenEmbedding_ = weights.tokenEmbeddingStored.valid()
                          ? backend.uploadStored(weights.tokenEmbeddingStored)
                          : backend.upload(weights.tokenEmbedding);
    if (!weights.positionEmbedding.empty()) positionEmbedding_ = backend.upload(weights.positionEmbedding);
    if (!weights.tokenTypeEmbedding.empty()) tokenTypeEmbedding_ = backend.upload(weights.tokenTypeEmbedding);
    relativeBias_ = weights.relativeBias;
    const Linear halting = upload(weights.halting);
    act_ = {block_.actSteps, block_.actThreshold, halting.weight, halting.bias};
    normalization_ = {block_.norm, spec_.normEps, backend.upload(Tensor({spec_.hidden}, 1.0f)),
                      backend.upload(Tensor({spec_.hidden}, 0.0f))};
    embeddingNorm_ = upload(weights.embeddingNorm);
    finalNorm_ = upload(weights.finalNorm);
    for (const HostLayer& host : weights.layers) layers_.push_back(upload(host));
    const HostLmHead& head = weights.lmHead;
    lmHead_ = {head.kind, {}, {}, upload(head.transform), upload(head.transformNorm), head.absence};
    if (head.stored.valid())
        lmHead_.weight = backend.uploadStored(head.stored);
    else if (!head.weight.empty())
        lmHead_.weight = backend.upload(head.weight);
    if (!head.bias.empty()) lmHead_.bias = backend.upload(head.bias);
}

TransformerModel::Linear TransformerModel::upload(const HostLinear& linear) const {
    Linear result;
    if (linear.stored.valid())
        result.weight = backend_.uploadStored(linear.stored);
    else if (!linear.weight.empty())
        result.weight = backend_.upload(linear.weight);
    if (!linear.bias.empty()) result.bias = backend_.upload(linear.bias);
    return result;
}

TransformerModel::Norm TransformerModel::upload(const HostNorm& norm) const {
    Norm result;
    if (block_.norm == variants::BlockSpec::Norm::Scale && !norm.gamma.empty()) {
        result.scale = norm.gamma.values()[0];
        return result;
    }
    if (!norm.gamma.empty()) result.gamma = backend_.upload(norm.gamma);
    if (!norm.beta.empty()) result.beta = backend_.upload(norm.beta);
    return result;
}

TransformerModel::Ffn TransformerModel::upload(const HostFfn& ffn) const {
    return {upload(ffn.up), upload(ffn.gate), upload(ffn.down)};
}

TransformerModel::Gate TransformerModel::upload(const HostGate& gate) const {
    Gate result{upload(gate.wr), upload(gate.ur), upload(gate.wz), upload(gate.uz), upload(gate.wg), upload(gate.ug),
                {}};
    if (!gate.bias.empty()) result.bias = backend_.upload(gate.bias);
    return result;
}

TransformerModel::Layer TransformerModel::upload(const HostLayer& host) const {
    Layer layer;
    layer.query = upload(host.query);
    layer.key = upload(host.key);
    layer.value = upload(host.value);
    layer.output = upload(host.output);
    layer.attentionNorm = upload(host.attentionNorm);
    layer.ffnNorm = upload(host.ffnNorm);
    layer.ffnPreNorm = upload(host.ffnPreNorm);
    layer.queryNorm = upload(host.queryNorm);
    layer.keyNorm = upload(host.keyNorm);
    layer.postAttentionNorm = upload(host.postAttentionNorm);
    layer.postFfnNorm = upload(host.postFfnNorm);
    layer.ffn = upload(HostFfn{host.up, host.gate, host.down});
    layer.ffnPre = upload(host.ffnPre);
    for (const HostFfn& expert : host.experts) layer.experts.push_back(upload(expert));
    if (!host.router.empty()) layer.router = backend_.upload(host.router);
    const auto scalar = [](const Tensor& t) { return t.empty() ? 0.0f : t.values()[0]; };
    layer.rezeroAttention = scalar(host.rezeroAttention);
    layer.rezeroFfn = scalar(host.rezeroFfn);
    layer.rezeroFfnPre = scalar(host.rezeroFfnPre);
    layer.relative = upload(host.relative);
    const auto row = [&](const Tensor& t) {
        return t.empty() ? DeviceTensor()
                         : backend_.upload(Tensor({1, int64_t(t.size())},
                                                  {t.values().begin(), t.values().end()}));
    };
    layer.relativeU = row(host.relativeU);
    layer.relativeV = row(host.relativeV);
    layer.linformerE = host.linformerE;
    layer.linformerF = host.linformerF;
    layer.gateAttention = upload(host.gateAttention);
    layer.gateFfn = upload(host.gateFfn);
    return layer;
}

// A zoo checkpoint runs its own `headlight` section, with the requested toggles on top; other
// checkpoints run the request as it is.
variants::VariantSpec TransformerModel::effectiveVariant(const variants::VariantSpec& requested) const {
    if (spec_.architecture != Architecture::Headlight) return requested;
    return variants::requestOverCheckpoint(spec_.zoo, requested);
}

bool TransformerModel::finalNormApplies() const {
    return finalNorm_.gamma.valid() || (finalNorm_.scale != 0.0f) ||
           (block_.norm == variants::BlockSpec::Norm::Ada && block_.placement == variants::BlockSpec::Placement::Pre &&
            block_.residual != variants::BlockSpec::Residual::ReZero);
}

bool TransformerModel::rotary(const variants::VariantSpec& variant) const {
    return (spec_.positions == PositionsKind::Rotary &&
            variant.position == variants::PositionKind::Checkpoint) ||
           variant.position == variants::PositionKind::Rope;
}

void TransformerModel::validate(const ModelInput& input, const variants::VariantSpec& variant) const {
    const std::size_t tokens = input.ids.size();
    if (tokens == 0) throw ModelError("empty input: there are no tokens to run");
    if (!input.tokenTypes.empty() && input.tokenTypes.size() != tokens)
        throw ModelError("token type ids have " + std::to_string(input.tokenTypes.size()) + " entries for " +
                         std::to_string(tokens) + " tokens");
    if (!input.attentionMask.empty() && input.attentionMask.size() != tokens)
        throw ModelError("attention mask has " + std::to_string(input.attentionMask.size()) + " entries for " +
                         std::to_string(tokens) + " tokens");
    const auto& mask = input.attentionMask;
    if (!block_.funnelBlocks.empty() && std::find(mask.begin(), mask.end(), 0) != mask.end())
        throw ModelError(
            "a funnel averages neighbouring tokens, so padding would be pooled into real "
            "rows; run the text without padding");
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
    // Why only with the checkpoint's table: sinusoidal, ALiBi and no positions run at any length
    // (the extrapolation the position-encoding views show).
    const bool learned = variant.position == variants::PositionKind::Checkpoint ||
                         variant.position == variants::PositionKind::Learned;
    if (positionEmbedding_.valid() && learned) {
        const int limit = spec_.maxPositions - spec_.positionOffset;
        if (int64_t(tokens) > limit)
            throw ModelError("the sequence has " + std::to_string(tokens) + " tokens but the model takes at most " +
                             std::to_string(limit) + "; shorten the text");
    }
    validateLearnedProjections(int64_t(tokens), variant);
}

// Linformer's learned E, F [k, P] fix both k and the longest input P.
void TransformerModel::validateLearnedProjections(int64_t tokens,
                                                  const variants::VariantSpec& variant) const {
    if (variant.kernel != variants::AttentionKernel::Linformer || layers_.empty() ||
        layers_[0].linformerE.empty())
        return;
    const Tensor& e = layers_[0].linformerE;
    if (variant.projected != e.dim(0))
        throw variants::VariantError(
            "this checkpoint's Linformer projects keys and values to k = " +
            std::to_string(e.dim(0)) + " rows with learned E, F; set k to " +
            std::to_string(e.dim(0)) + " or choose another kernel");
    if (tokens > e.dim(1))
        throw ModelError("the sequence has " + std::to_string(tokens) +
                         " tokens but Linformer's learned projections cover at most " +
                         std::to_string(e.dim(1)) + "; shorten the text");
}

Tensor TransformerModel::positionTable() const {
    return positionEmbedding_.valid() ? backend_.download(positionEmbedding_) : Tensor{};
}

std::vector<int32_t> TransformerModel::positionIds(const ModelInput& input) const {
    const auto familyPositions = familyOf(spec_.architecture).positionIds;
    if (familyPositions) return familyPositions(spec_, input.ids, input.attentionMask);
    std::vector<int32_t> positions(input.ids.size());
    for (std::size_t t = 0; t < positions.size(); ++t)
        positions[t] = int32_t(t);
    return positions;
}

DeviceTensor TransformerModel::embed(const Pass& pass) const {
    const ModelInput& input = pass.input;
    const int64_t tokens = int64_t(input.ids.size()), d = spec_.hidden;
    DeviceTensor x = backend_.allocate({tokens, d});
    backend_.gatherRows(tokenEmbedding_, input.ids, x);
    if (spec_.embeddingScale != 1.0f) backend_.map(x, MapOp::Affine, spec_.embeddingScale, 0.0f, x);
    const bool learned = pass.variant.position == variants::PositionKind::Checkpoint ||
                         pass.variant.position == variants::PositionKind::Learned;
    const bool adaptive = block_.actSteps > 0; // a Universal Transformer adds its signals per step
    if (positionEmbedding_.valid() && learned && !adaptive) {
        DeviceTensor positions = backend_.allocate({tokens, d});
        backend_.gatherRows(positionEmbedding_, pass.positions, positions);
        backend_.add(x, positions, x);
    }
    if (pass.variant.position == variants::PositionKind::Sinusoidal && !adaptive)
        backend_.add(x, backend_.upload(variants::sinusoidalTable(tokens, d)), x);
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

void TransformerModel::project(const Linear& linear, const DeviceTensor& x, DeviceTensor& out) const {
    backend_.linear(x, linear.weight, linear.bias.valid() ? &linear.bias : nullptr, out);
}

// Qwen3's q_norm / k_norm: RMSNorm over each head's d features of x [T, heads·d], in place;
// nothing when the layer has no such norm. Why through [heads, T, d]: a Vulkan tensor's rows are
// its storage's rows, so the norm needs a tensor whose rows are the heads' vectors.
void TransformerModel::normalizeHeads(const Norm& norm, DeviceTensor& x) const {
    if (!norm.gamma.valid()) return;
    const int64_t d = norm.gamma.dim(0), heads = x.dim(1) / d;
    DeviceTensor split = backend_.allocate({heads, x.dim(0), d});
    backend_.splitHeads(x, int(heads), split);
    backend_.rmsNorm(split, norm.gamma, spec_.normEps, split);
    backend_.mergeHeads(split, x);
}

variants::CrossAttentionLayer TransformerModel::crossAttention(const Layer& layer, bool xl) const {
    variants::CrossAttentionLayer cross;
    cross.heads = spec_.heads;
    cross.headDim = spec_.headDim;
    cross.scale = spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(spec_.headDim)) : 1.0f;
    cross.project = [this, &layer](const DeviceTensor& queries, const DeviceTensor& source) {
        const int64_t rows = queries.dim(0), keys = source.dim(0);
        const int64_t heads = spec_.heads, kvHeads = spec_.kvHeads, d = spec_.headDim;
        variants::CrossProjection p{backend_.allocate({rows, heads * d}),
                                    backend_.allocate({kvHeads, keys, d}),
                                    backend_.allocate({kvHeads, keys, d})};
        DeviceTensor k = backend_.allocate({keys, kvHeads * d});
        DeviceTensor v = backend_.allocate({keys, kvHeads * d});
        project(layer.query, queries, p.q);
        project(layer.key, source, k);
        project(layer.value, source, v);
        backend_.splitHeads(k, int(kvHeads), p.kh);
        backend_.splitHeads(v, int(kvHeads), p.vh);
        return p;
    };
    cross.output = [this, &layer](const DeviceTensor& probabilities, const DeviceTensor& vh) {
        const int64_t heads = probabilities.dim(0), rows = probabilities.dim(1), d = spec_.headDim;
        DeviceTensor context = backend_.allocate({heads, rows, d});
        backend_.matmul(probabilities, vh, false, 1.0f, context);
        DeviceTensor merged = backend_.allocate({rows, heads * d});
        backend_.mergeHeads(context, merged);
        DeviceTensor out = backend_.allocate({rows, spec_.hidden});
        project(layer.output, merged, out);
        return out;
    };
    if (!xl) return cross;
    cross.relative = [this, &layer](const DeviceTensor& rows) {
        DeviceTensor r = backend_.allocate({rows.dim(0), spec_.heads * spec_.headDim});
        project(layer.relative, rows, r);
        return r;
    };
    cross.u = layer.relativeU;
    cross.v = layer.relativeV;
    return cross;
}

// One attention sub-layer on the current segment (AttentionRoute::Segmented).
DeviceTensor TransformerModel::attendSegment(const Layer& layer, int index, const DeviceTensor& x,
                                             Pass& pass, PendingCapture& capture) const {
    const variants::CrossAttentionLayer cross =
        crossAttention(layer, pass.variant.position == variants::PositionKind::Xl);
    const KeyMask rule{spec_.causal, spec_.slidingWindow.value_or(0), pass.input.attentionMask};
    const variants::SegmentRecord record{capture.wantScores,         capture.wantProbabilities,
                                         pass.wants.internals,       &capture.hostScores,
                                         &capture.hostProbabilities, &capture.hostInternals};
    return variants::attendSegment(backend_, *pass.segments, index, cross, rule, x, record);
}

variants::AttentionShape TransformerModel::attentionShape(const ModelInput& input,
                                                          const variants::VariantSpec& variant) const {
    variants::AttentionShape shape;
    shape.heads = spec_.heads;
    shape.kvHeads = spec_.kvHeads;
    shape.headDim = spec_.headDim;
    shape.tokens = int64_t(input.ids.size());
    shape.causal = spec_.causal;
    shape.slidingWindow = spec_.slidingWindow.value_or(0);
    shape.keyValid = input.attentionMask;
    if (variant.position == variants::PositionKind::T5) {
        shape.t5Table = relativeBias_;
        shape.t5Buckets = block_.t5Buckets;
        shape.t5MaxDistance = block_.t5MaxDistance;
    }
    return shape;
}

float TransformerModel::attentionScale() const {
    return spec_.attentionScale > 0          ? spec_.attentionScale
           : spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(spec_.headDim))
                                    : 1.0f;
}

// Multi-head (grouped-query) self-attention of one layer: x [T, D] → [T, D].
DeviceTensor TransformerModel::attend(const Layer& layer, int index, const DeviceTensor& x,
                                      Pass& pass, PendingCapture& capture) const {
    if (pass.plan.attention == variants::AttentionRoute::Segmented)
        return attendSegment(layer, index, x, pass, capture);
    const auto [q, k] = queriesKeys(layer, index, x, pass, capture);
    DeviceTensor v = backend_.allocate({x.dim(0), spec_.kvHeads * spec_.headDim});
    project(layer.value, x, v);
    const bool windowed = !global(index);
    DeviceTensor context;
    if (pass.prefixFrom)
        context = attendAfterPrefix(index, q, k, v, windowed, pass, capture);
    else if (pass.plan.attention == variants::AttentionRoute::Composed)
        context = attendComposed(layer, index, q, k, v, pass, capture);
    else
        context = attendFused(q, k, v, windowed, pass, capture);
    if (pass.kept && !pass.prefixFrom) keepKeysValues(index, k, v, pass);
    interveneOnHeads(index, pass, capture, context);
    DeviceTensor out = backend_.allocate({x.dim(0), spec_.hidden});
    project(layer.output, context, out);
    return out;
}

std::pair<DeviceTensor, DeviceTensor> TransformerModel::queriesKeys(const Layer& layer, int index,
                                                                    const DeviceTensor& x,
                                                                    const Pass& pass,
                                                                    PendingCapture& capture) const {
    const int64_t tokens = x.dim(0), d = spec_.headDim;
    DeviceTensor q = backend_.allocate({tokens, spec_.heads * d});
    DeviceTensor k = backend_.allocate({tokens, spec_.kvHeads * d});
    project(layer.query, x, q);
    project(layer.key, x, k);
    normalizeHeads(layer.queryNorm, q);
    normalizeHeads(layer.keyNorm, k);
    const bool windowed = !global(index);
    if (rotary(pass.variant)) {
        // GPT-NeoX and GPT-J turn only the first rotaryDim features of each head; Gemma 3's
        // windowed layers have a rotary base of their own.
        const int turned = spec_.rotaryDim > 0 ? spec_.rotaryDim : spec_.headDim;
        const double theta =
            windowed && spec_.localRopeTheta > 0 ? spec_.localRopeTheta : spec_.ropeTheta;
        RotaryParams rope{spec_.heads, spec_.headDim, turned, spec_.rotaryInterleaved, theta};
        backend_.rope(q, rope, pass.positions);
        rope.heads = spec_.kvHeads;
        backend_.rope(k, rope, pass.positions);
    }
    if (capture.wantQueriesKeys) {
        capture.queries = q;
        capture.keys = k;
        capture.rule = {attentionScale(), windowed ? spec_.slidingWindow.value_or(0) : 0,
                        spec_.attentionSoftcap};
    }
    return {q, k};
}

// Why the fused route only, and never while a cache is filled: a composed kernel's step may
// update the pass's attention plan and memory, and a cached pass keeps every layer's values.
bool TransformerModel::wantsOnlyQueriesKeys(const CaptureRequest& capture,
                                            const variants::ForwardPlan& plan) {
    return capture.queriesKeys && !capture.probabilities && !capture.scores &&
           !capture.headOutputs && !capture.internals &&
           plan.attention == variants::AttentionRoute::Fused;
}

DeviceTensor TransformerModel::attendFused(const DeviceTensor& q, const DeviceTensor& k,
                                           const DeviceTensor& v, bool windowed, const Pass& pass,
                                           PendingCapture& capture) const {
    const int64_t tokens = q.dim(0), h = spec_.heads;
    DeviceTensor context = backend_.allocate({tokens, h * spec_.headDim});
    AttentionParams params;
    params.heads = spec_.heads;
    params.kvHeads = spec_.kvHeads;
    params.headDim = spec_.headDim;
    params.scale = attentionScale();
    params.causal = spec_.causal;
    params.slidingWindow = windowed ? spec_.slidingWindow.value_or(0) : 0;
    params.softcap = spec_.attentionSoftcap;
    // Why not with a funnel: validate() refuses its padding, and pooled rows have no mask.
    if (block_.funnelBlocks.empty()) params.keyValid = pass.input.attentionMask;
    if (capture.wantScores) capture.scores = backend_.allocate({h, tokens, tokens});
    if (capture.wantProbabilities) capture.probabilities = backend_.allocate({h, tokens, tokens});
    DeviceTensor* scores = capture.wantScores ? &capture.scores : nullptr;
    DeviceTensor* probs = capture.wantProbabilities ? &capture.probabilities : nullptr;
    backend_.attention(q, k, v, params, context, scores, probs);
    return context;
}

void TransformerModel::interveneOnHeads(int index, const Pass& pass, PendingCapture& capture,
                                        DeviceTensor& context) const {
    const std::vector<uint8_t> valid = pass.input.attentionMask.empty()
                                           ? std::vector<uint8_t>(pass.input.ids.size(), 1)
                                           : pass.input.attentionMask;
    variants::ablateHeads(backend_, pass.plan.intervention, index, spec_.heads, valid, context);
    if (!capture.wantHeadOutputs) return;
    capture.headOutputs = backend_.allocate({spec_.heads, context.dim(0), spec_.headDim});
    backend_.splitHeads(context, spec_.heads, capture.headOutputs);
}

// The composed path: heads split to [H, T, d], attention by the variant, heads merged back.
DeviceTensor TransformerModel::attendComposed(const Layer& layer, int index, DeviceTensor q,
                                              DeviceTensor k, DeviceTensor v, Pass& pass,
                                              PendingCapture& capture) const {
    const int64_t tokens = q.dim(0), d = spec_.headDim;
    variants::LayerAttention attention;
    attention.layer = index;
    if (!layer.linformerE.empty()) {
        attention.keyProjection = &layer.linformerE;
        attention.valueProjection = &layer.linformerF;
    }
    attention.scale = spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(d)) : 1.0f;
    attention.q = backend_.allocate({spec_.heads, tokens, d});
    attention.k = backend_.allocate({spec_.kvHeads, tokens, d});
    attention.v = backend_.allocate({spec_.kvHeads, tokens, d});
    backend_.splitHeads(q, spec_.heads, attention.q);
    backend_.splitHeads(k, spec_.kvHeads, attention.k);
    backend_.splitHeads(v, spec_.kvHeads, attention.v);
    variants::AttentionWants wants = pass.wants;
    wants.scores = capture.wantScores;
    wants.probabilities = capture.wantProbabilities;
    variants::AttentionOutputs out = variants::attendComposed(
        backend_, attention, pass.variant, pass.attentionPlan, pass.memory, wants);
    if (wants.scores) capture.scores = out.scores;
    if (wants.probabilities) capture.probabilities = out.probabilities;
    if (wants.internals) capture.internals = std::move(out.internals);
    DeviceTensor context = backend_.allocate({tokens, spec_.heads * d});
    backend_.mergeHeads(out.context, context);
    return context;
}

// The trained tables a requested position kind reads.
void TransformerModel::checkTrainedPositions(const variants::VariantSpec& variant) const {
    if (variant.position == variants::PositionKind::T5 && relativeBias_.empty())
        throw variants::VariantError("this checkpoint has no trained T5 bias table to run T5 positions with");
    if (variant.position == variants::PositionKind::Learned && !positionEmbedding_.valid())
        throw variants::VariantError("this checkpoint has no learned position table");
}

void TransformerModel::checkCapture(const ModelInput& input, const CaptureRequest& capture) const {
    for (int l : capture.layers)
        if (l < 0 || l >= capturedLayers())
            throw ModelError("layer " + std::to_string(l) + " does not exist (the model has " +
                             std::to_string(capturedLayers()) + ")");
    for (int h : capture.heads)
        if (h < 0 || h >= spec_.heads)
            throw ModelError("head " + std::to_string(h) + " does not exist (the model has " +
                             std::to_string(spec_.heads) + ")");
    checkMapCaptureLength(int64_t(input.ids.size()), capture);
    checkForwardBudget(spec_, int64_t(input.ids.size()), capture, backend_.kind() == BackendKind::Cpu);
    if (const auto device = backend_.deviceMemory())
        checkDeviceForwardBudget(spec_, int64_t(input.ids.size()), capture, *device);
}

Trace TransformerModel::forward(const ModelInput& input, const CaptureRequest& capture,
                                const variants::VariantSpec& requested,
                                const variants::Intervention& intervention,
                                const PassControl& control) const {
    variants::VariantSpec variant;
    const variants::ForwardPlan plan =
        preparePass(input, capture, requested, intervention, variant);
    return runPass(input, capture, variant, plan, control, nullptr);
}

variants::ForwardPlan TransformerModel::preparePass(const ModelInput& input,
                                                    const CaptureRequest& capture,
                                                    const variants::VariantSpec& requested,
                                                    const variants::Intervention& intervention,
                                                    variants::VariantSpec& variant) const {
    if (requested.knn)
        throw variants::VariantError(
            "kNN-LM needs its datastore: run the pass through variants::forwardKnn");
    if (capture.logits) requireLmHead();
    variant = effectiveVariant(requested);
    validate(input, variant);
    variants::ForwardPlan plan =
        variants::planForward(variant, spec_, intervention, int64_t(input.ids.size()));
    checkTrainedPositions(variant);
    checkCapture(input, capture);
    if (capture.queriesKeys && (plan.attention == variants::AttentionRoute::Segmented ||
                                plan.depth != variants::DepthLoop::Stack))
        throw ModelError("the atlas rebuilds exact attention from each layer's queries and keys, "
                         "and these options change attention or the layer loop: turn them off, "
                         "or use the attention view on a shorter text");
    if (capture.queriesKeys && plan.attention == variants::AttentionRoute::Composed)
        if (const std::string refusal = variants::atlasRefusal(variant); !refusal.empty())
            throw ModelError(refusal);
    return plan;
}

// `from` (a reuse of a cached pass) replaces the embeddings with the input of its first layer;
// `input` holds the positions computed (a prefix reuse's new tokens).
Trace TransformerModel::runPass(const ModelInput& input, const CaptureRequest& capture,
                                const variants::VariantSpec& variant,
                                const variants::ForwardPlan& plan, const PassControl& control,
                                const PassStart* from) const {
    const auto start = std::chrono::steady_clock::now();
    Trace trace;
    trace.ids = input.ids;
    trace.valid = input.attentionMask.empty() ? std::vector<uint8_t>(input.ids.size(), 1) : input.attentionMask;
    trace.layers.resize(std::size_t(capturedLayers()));
    Pass pass{input, variant, plan, positionIds(input), {}, {}, {}};
    pass.lastLayer = lastLayerNeeded(capture, plan);
    pass.queriesKeysOnly = pass.lastLayer >= 0 && !from && wantsOnlyQueriesKeys(capture, plan);
    pass.wants.internals = capture.internals;
    pass.control = &control;
    if (from) {
        pass.kept = from->kept;
        pass.prefixFrom = from->prefixFrom;
        pass.prefix = from->prefix;
        pass.firstLayer = from->firstLayer;
        pass.layersRun = from->firstLayer; // the kept layers count as run
        if (!from->positions.empty()) pass.positions = from->positions;
    }
    if (plan.attention == variants::AttentionRoute::Composed)
        pass.attentionPlan =
            variants::planAttention(backend_, attentionShape(input, variant), variant);
    // Why: captured tensors stay on the device until the pass is recorded, so that a Vulkan
    // backend runs the whole pass as one submission and reads back only what was asked for.
    std::vector<PendingCapture> pending(trace.layers.size());
    for (std::size_t l = 0; l < pending.size(); ++l) {
        pending[l].wantScores = capture.scores && capture.wantsLayer(int(l));
        pending[l].wantProbabilities = capture.probabilities && capture.wantsLayer(int(l));
        pending[l].wantHeadOutputs = capture.headOutputs && capture.wantsLayer(int(l));
        pending[l].wantSublayers = capture.sublayers && capture.wantsLayer(int(l));
        pending[l].wantQueriesKeys = capture.queriesKeys && capture.wantsLayer(int(l));
    }
    std::vector<DeviceTensor> hidden;
    std::optional<variants::ExitTracker> exits;
    if (plan.earlyExit) exits.emplace(variant.earlyExit, int64_t(input.ids.size()), spec_.layers);

    DeviceTensor x = from && from->x.valid() ? from->x : embed(pass);
    if (capture.hiddenStates) hidden.push_back(x);
    x = runDepth(x, pass, pending, capture.hiddenStates ? &hidden : nullptr, exits, trace);
    trace.layersRun =
        plan.depth == variants::DepthLoop::Stack ? pass.layersRun : int(trace.layers.size());
    const bool stoppedEarly = pass.queriesKeysOnly ||
                              (pass.lastLayer >= 0 && pass.lastLayer + 1 < int(layers_.size()));
    const bool pre = block_.placement == variants::BlockSpec::Placement::Pre;
    // Why: like HF, pre-norm models report the last layer's state only after the final norm.
    if (capture.hiddenStates && pre && hidden.size() > 1 && finalNormApplies()) hidden.pop_back();
    if (capture.residualBeforeFinalNorm && !stoppedEarly)
        trace.residualBeforeFinalNorm = backend_.download(x);
    if (finalNormApplies() && !stoppedEarly) {
        DeviceTensor normed = backend_.allocate(x.shape());
        normalize(finalNorm_, x, normed);
        x = normed;
        if (capture.hiddenStates) hidden.push_back(x);
    }
    if (!stoppedEarly) trace.lastHiddenState = backend_.download(x);
    if (capture.logits) trace.logits = backend_.download(headLogits(x));
    for (std::size_t l = 0; l < pending.size(); ++l) collect(pending[l], capture, trace.layers[l]);
    if (capture.internals) collectPlan(pass.attentionPlan, trace);
    if (exits) {
        trace.internals["exit_layer"] = exits->exitLayers();
        trace.internals["exit_signal"] = exits->signals();
        if (variant.earlyExit.criterion != variants::EarlyExit::Criterion::Saturation)
            trace.internals["exit_prediction"] = exits->predictions();
    }
    for (const DeviceTensor& h : hidden) trace.hiddenStates.push_back(backend_.download(h));
    trace.forwardMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return trace;
}

// Early exit after layer `layer`: tokens that left earlier keep their state (copied up), the
// others are judged on this layer's output.
void TransformerModel::trackExits(variants::ExitTracker& exits, int layer, const DeviceTensor& before,
                                  DeviceTensor& after) const {
    const int64_t tokens = after.dim(0);
    for (int64_t t = 0; t < tokens; ++t)
        if (exits.exited(t)) backend_.copyRows(before, t, 1, after, t);
    const variants::EarlyExit& rule = exits.rule();
    if (rule.criterion == variants::EarlyExit::Criterion::Saturation) {
        exits.update(layer, variants::saturationSignal(backend_.download(before), backend_.download(after)));
        return;
    }
    // The LM head: final norm, then the head.
    DeviceTensor normed = backend_.allocate(after.shape());
    if (finalNorm_.gamma.valid()) normalize(finalNorm_, after, normed);
    else backend_.copyRows(after, 0, tokens, normed, 0);
    exits.update(layer, variants::logitSignal(rule, backend_.download(headLogits(normed))));
}

// Whether layer `index` attends without the sliding window (every layer unless the checkpoint
// mixes windowed and global layers, as Gemma does).
bool TransformerModel::global(int index) const {
    const auto& layers = spec_.globalLayers;
    return std::size_t(index) < layers.size() && layers[std::size_t(index)];
}

void TransformerModel::collect(const PendingCapture& pending, const CaptureRequest& capture, LayerTrace& layer) const {
    if (pending.queries.valid()) {
        layer.queries = backend_.download(pending.queries);
        layer.keys = backend_.download(pending.keys);
        layer.attentionRule = pending.rule;
    }
    collectSublayers(pending, layer);
    if (!pending.wantScores && !pending.wantProbabilities && !pending.headOutputs.valid() &&
        pending.internals.empty() && pending.hostInternals.empty())
        return;
    const auto heads = [&](const DeviceTensor& device, const Tensor& host) {
        // Why not through selectHeads when every head is kept: it would copy the maps once more
        // (a BERT-base layer's are 12 MB at T = 512).
        if (capture.heads.empty()) return host.empty() ? backend_.download(device) : host;
        return selectHeads(host.empty() ? backend_.download(device) : host, capture.heads);
    };
    layer.heads = capture.heads;
    if (layer.heads.empty())
        for (int h = 0; h < spec_.heads; ++h)
            layer.heads.push_back(h);
    if (pending.scores.valid() || !pending.hostScores.empty())
        layer.scores = heads(pending.scores, pending.hostScores);
    if (pending.probabilities.valid() || !pending.hostProbabilities.empty())
        layer.probabilities = heads(pending.probabilities, pending.hostProbabilities);
    if (pending.headOutputs.valid()) layer.headOutputs = backend_.download(pending.headOutputs);
    for (const auto& [name, tensor] : pending.internals)
        layer.internals[name] = backend_.download(tensor);
    for (const auto& [name, tensor] : pending.hostInternals)
        layer.internals[name] = tensor;
}

void TransformerModel::collectSublayers(const PendingCapture& pending, LayerTrace& layer) const {
    const auto keep = [&](const DeviceTensor& device, Tensor& host) {
        if (device.valid()) host = backend_.download(device);
    };
    keep(pending.attentionOutput, layer.attentionOutput);
    keep(pending.residualMid, layer.residualMid);
    keep(pending.mlpInput, layer.mlpInput);
    keep(pending.mlpOutput, layer.mlpOutput);
}

void TransformerModel::requireLmHead() const {
    if (lmHead_.kind == HostLmHead::Kind::None) throw ModelError(lmHead_.absence);
}

DeviceTensor TransformerModel::headLogits(const DeviceTensor& x) const {
    DeviceTensor input = x;
    if (lmHead_.kind == HostLmHead::Kind::MaskedLm) {
        DeviceTensor dense = backend_.allocate(x.shape());
        project(lmHead_.transform, x, dense);
        backend_.activation(dense, spec_.activation, dense);
        input = backend_.allocate(x.shape());
        normalize(lmHead_.transformNorm, dense, input);
    }
    DeviceTensor logits = backend_.allocate({x.dim(0), spec_.vocabSize});
    backend_.linear(input, lmHead_.weight.valid() ? lmHead_.weight : tokenEmbedding_,
                    lmHead_.bias.valid() ? &lmHead_.bias : nullptr, logits);
    // Gemma 2's final_logit_softcapping: c·tanh(z / c).
    if (const float cap = spec_.finalSoftcap; cap > 0) {
        backend_.map(logits, MapOp::Tanh, 1.0f / cap, 0.0f, logits);
        backend_.map(logits, MapOp::Affine, cap, 0.0f, logits);
    }
    return logits;
}

Tensor TransformerModel::lensLogits(const Tensor& hidden) const {
    requireLmHead();
    if (hidden.rank() != 2 || hidden.dim(1) != spec_.hidden)
        throw ModelError("the logit lens reads hidden states [T, " + std::to_string(spec_.hidden) +
                         "]");
    DeviceTensor x = backend_.upload(hidden);
    if (finalNormApplies()) {
        DeviceTensor normed = backend_.allocate(x.shape());
        normalize(finalNorm_, x, normed);
        x = normed;
    }
    return backend_.download(headLogits(x));
}

Tensor TransformerModel::unembedDirections(const Tensor& directions) const {
    requireLmHead();
    if (lmHead_.kind == HostLmHead::Kind::MaskedLm)
        throw ModelError("a masked-LM head transforms its input before the unembedding, so a "
                         "direction has no direct logit effect");
    if (directions.rank() != 2 || directions.dim(1) != spec_.hidden)
        throw ModelError("directions to unembed are [N, " + std::to_string(spec_.hidden) + "]");
    const DeviceTensor x = backend_.upload(directions);
    DeviceTensor logits = backend_.allocate({x.dim(0), spec_.vocabSize});
    backend_.linear(x, lmHead_.weight.valid() ? lmHead_.weight : tokenEmbedding_, nullptr, logits);
    return backend_.download(logits);
}

// The pass-wide tensors a view shows: the nominal pattern, the mask obeyed, biases, span ramps.
void TransformerModel::collectPlan(const variants::AttentionPlan& plan, Trace& trace) const {
    if (!plan.nominalMask.empty()) trace.internals["nominal_mask"] = plan.nominalMask;
    if (!plan.mask.empty()) trace.internals["mask"] = plan.mask;
    if (!plan.bias.empty()) trace.internals["bias"] = plan.bias;
    if (!plan.span.empty()) trace.internals["span_mask"] = plan.span;
}
} // namespace headlight
