#pragma once
// TransformerModel: one forward pass written once against the Backend ops, for every supported
// architecture. The blocks differ only in where the norms sit and how positions enter:
//
//   post-LN (BERT, RoBERTa, DistilBERT):  x = LN₁(x + Attn(x));     x = LN₂(x + FFN(x))
//   pre-LN  (GPT-2, Llama family):        x = x + Attn(N₁(x));      x = x + FFN(N₂(x));  final N
//
// positions: learned absolute embeddings added to the token embeddings (BERT family, GPT-2), or
// rotary embeddings applied to q and k inside attention (Llama family).
//
// A VariantSpec (core/variants) changes the pass per call. Before anything runs, a ForwardPlan
// (variants/forward_plan.h) names the depth loop and the attention route (the backend's fused
// kernel, the composed path of variants/composed_attention.h, or segment attention), refusing
// what no loop can run; positions and the FFN follow the spec's other options.

#include "backend/backend.h"
#include "model/checkpoint_layout.h"
#include "model/kv_cache.h"
#include "model/model_spec.h"
#include "model/pass_control.h"
#include "model/trace.h"
#include "variants/adaptive_computation_time.h"
#include "variants/attention_plan.h"
#include "variants/composed_attention.h"
#include "variants/cross_attention.h"
#include "variants/early_exit.h"
#include "variants/forward_plan.h"
#include "variants/norms.h"
#include "variants/sublayer_order.h"
#include "variants/transformer_xl_recurrence.h"
#include "variants/variant_spec.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace headlight {

class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ModelInput {
    std::vector<int32_t> ids;           // [T]
    std::vector<int32_t> tokenTypes;    // [T] or empty (all 0)
    std::vector<uint8_t> attentionMask; // [T] or empty (all 1)
};

class TransformerModel {
public:
    // Uploads the weights to `backend` once; they are reused by every forward pass.
    TransformerModel(ModelSpec spec, const HostWeights& weights, Backend& backend);

    const ModelSpec& spec() const { return spec_; }
    Backend& backend() const { return backend_; }
    // The checkpoint's learned position table [P, D] (the position-encoding view); empty when
    // the model has none. Reads the device copy: call it while no forward pass runs.
    Tensor positionTable() const;

    // Throws ModelError for empty input, over-long sequences, ids or token types out of range,
    // and variants::VariantError for a variant this checkpoint cannot run or an intervention
    // (head ablation, patch; variants/intervention.h) the plan refuses. `control` follows the
    // pass layer by layer and may cancel it (PassCancelled).
    Trace forward(const ModelInput& input, const CaptureRequest& capture = {},
                  const variants::VariantSpec& variant = {},
                  const variants::Intervention& intervention = {},
                  const PassControl& control = {}) const;
    // The same trace as forward(), reusing what `cache` kept of earlier passes of this model
    // (model/kv_cache.h says what is reused when), and keeping this pass there.
    Trace forwardCached(KvCache& cache, const ModelInput& input, const CaptureRequest& capture,
                        const variants::VariantSpec& variant = {},
                        const variants::Intervention& intervention = {},
                        const PassControl& control = {}) const;
    void validate(const ModelInput& input, const variants::VariantSpec& variant = {}) const;

    // Whether the checkpoint has an LM head (logits, the logit lens, the variant-effect view),
    // and if it has none, why, in one line.
    bool hasLmHead() const { return lmHead_.kind != HostLmHead::Kind::None; }
    const std::string& lmHeadAbsence() const { return lmHead_.absence; }
    // The logit lens at one residual stream [T, D] (an entry of Trace::hiddenStates before the
    // final norm): the model's final norm where it has one, then its LM head -> [T, V]. Throws
    // ModelError when the model has no head.
    Tensor lensLogits(const Tensor& hidden) const;
    // The LM head's matrix alone applied to `directions` [N, D] -> [N, V]: W_U·d, without the
    // final norm, the bias or soft-capping (the direct logit effect of a direction, such as an
    // SAE feature's decoder row). Throws ModelError when the model has no head, or a masked-LM
    // head, whose transform is not linear. Runs on the backend: call it from the pass's thread.
    Tensor unembedDirections(const Tensor& directions) const;

private:
    struct Linear {
        DeviceTensor weight, bias; // bias invalid when absent
    };
    using Norm = variants::NormWeights;
    struct Ffn {
        Linear up, gate, down; // gate invalid unless the FFN is gated
    };
    struct Gate {
        Linear wr, ur, wz, uz, wg, ug;
        DeviceTensor bias; // GTrXL b_g
    };
    struct Layer {
        Linear query, key, value, output;
        Linear relative;                   // Transformer-XL W_R (zoo, xl positions)
        DeviceTensor relativeU, relativeV; // Transformer-XL u, v as [1, D]
        Tensor linformerE, linformerF;     // Linformer E, F [k, P], on the host: sliced per input
        Norm attentionNorm, ffnNorm, ffnPreNorm;
        Norm queryNorm, keyNorm; // per-head RMSNorm of q and k (Qwen3); gamma invalid elsewhere
        Norm postAttentionNorm, postFfnNorm; // Gemma's sub-layer output norms; invalid elsewhere
        Ffn ffn, ffnPre;
        std::vector<Ffn> experts;
        DeviceTensor router;
        float rezeroAttention = 0.0f, rezeroFfn = 0.0f, rezeroFfnPre = 0.0f;
        Gate gateAttention, gateFfn;
    };
    struct LmHead {
        HostLmHead::Kind kind = HostLmHead::Kind::None;
        DeviceTensor weight, bias; // weight invalid when the token embedding serves (tied)
        Linear transform;          // BERT's masked-LM transform
        Norm transformNorm;
        std::string absence;
    };
    struct PendingCapture {
        bool wantScores = false, wantProbabilities = false, wantHeadOutputs = false;
        bool wantQueriesKeys = false;
        bool wantSublayers = false;
        DeviceTensor scores, probabilities, headOutputs; // invalid when not asked for
        DeviceTensor attentionOutput, residualMid, mlpInput, mlpOutput; // LayerTrace's
        DeviceTensor queries, keys; // post-RoPE, when wantQueriesKeys
        AttentionRule rule;         // what attention did with them
        std::map<std::string, DeviceTensor> internals;
        std::map<std::string, Tensor> hostInternals; // decided on the host (routing)
        Tensor hostScores, hostProbabilities;        // assembled segment by segment (recurrence)
    };
    // What one forward pass shares between its layers.
    struct Pass {
        const ModelInput& input;
        const variants::VariantSpec& variant;
        const variants::ForwardPlan& plan;
        std::vector<int32_t> positions;
        variants::AttentionPlan attentionPlan; // empty unless attention takes the composed route
        variants::AttentionMemory memory;
        variants::AttentionWants wants;
        variants::Segments* segments = nullptr; // the segment loop's (AttentionRoute::Segmented)
        int lastLayer = -1; // the plain stack stops after this layer; -1: it runs every layer
        // The last layer is wanted for its queries and keys alone: the stack stops once they
        // are captured, before that layer's attention and FFN (the atlas of a deep layer).
        bool queriesKeysOnly = false;
        int layersRun = 0;  // layers the plain stack finished
        const PassControl* control = nullptr;
        // Reuse of a cached pass (model/kv_cache.h; transformer_cached.cpp): `kept` receives
        // what the cache keeps of this pass; with `prefixFrom` the pass computes positions
        // prefix.. only, attending prefixFrom's keys and values; layers < firstLayer are skipped.
        CachedPass* kept = nullptr;
        const CachedPass* prefixFrom = nullptr;
        int64_t prefix = 0;
        int firstLayer = 0;
    };
    // Where a pass starts when it reuses a cached one (runPass): its input to layer firstLayer.
    struct PassStart {
        DeviceTensor x;                 // invalid: the pass embeds its input
        std::vector<int32_t> positions; // of the input's tokens; empty: positionIds(input)
        CachedPass* kept = nullptr;
        const CachedPass* prefixFrom = nullptr;
        int64_t prefix = 0;
        int firstLayer = 0;
    };
    using SublayerKind = variants::SublayerKind;
    using Sublayer = variants::Sublayer;
    // F(N(x)) of one sub-layer, given the normed input (the residual wiring is applySublayer's).
    using SublayerFunction = std::function<DeviceTensor(const DeviceTensor& normed)>;

    // [SECTION] loading (transformer.cpp)
    Linear upload(const HostLinear& linear) const;
    Norm upload(const HostNorm& norm) const;
    Ffn upload(const HostFfn& ffn) const;
    Gate upload(const HostGate& gate) const;
    Layer upload(const HostLayer& layer) const;
    std::vector<int32_t> positionIds(const ModelInput& input) const;
    bool rotary(const variants::VariantSpec& variant) const;
    bool finalNormApplies() const;
    bool global(int layer) const;
    variants::VariantSpec effectiveVariant(const variants::VariantSpec& requested) const;

    // [SECTION] one pass (transformer.cpp)
    // The checks and the plan of a pass; `variant` receives the effective variant.
    variants::ForwardPlan preparePass(const ModelInput& input, const CaptureRequest& capture,
                                      const variants::VariantSpec& requested,
                                      const variants::Intervention& intervention,
                                      variants::VariantSpec& variant) const;
    // The pass itself, from the embeddings or as `from` says.
    Trace runPass(const ModelInput& input, const CaptureRequest& capture,
                  const variants::VariantSpec& variant, const variants::ForwardPlan& plan,
                  const PassControl& control, const PassStart* from) const;

    // [SECTION] reuse of cached passes (transformer_cached.cpp)
    // Why a plan cannot reuse earlier layers, or a prefix; empty when it can.
    std::string layerReuseBlocker(const variants::ForwardPlan& plan) const;
    std::string prefixReuseBlocker(const variants::ForwardPlan& plan, const ModelInput& input,
                                   const variants::VariantSpec& variant) const;
    Trace runFromLayer(const CacheReuse& reuse, const ModelInput& input,
                       const CaptureRequest& capture, const variants::VariantSpec& variant,
                       const variants::ForwardPlan& plan, const PassControl& control,
                       CachedPass& kept) const;
    Trace runAfterPrefix(const CacheReuse& reuse, const ModelInput& input,
                         const CaptureRequest& capture, const variants::VariantSpec& variant,
                         const variants::ForwardPlan& plan, const PassControl& control,
                         CachedPass& kept) const;
    // Attention of positions prefix.. over the cached keys and values and their own.
    DeviceTensor attendAfterPrefix(int index, const DeviceTensor& q, const DeviceTensor& k,
                                   const DeviceTensor& v, bool windowed, Pass& pass,
                                   PendingCapture& capture) const;
    void keepKeysValues(int index, const DeviceTensor& k, const DeviceTensor& v, Pass& pass) const;

    // [SECTION] embedding and attention (transformer.cpp)
    DeviceTensor embed(const Pass& pass) const;
    DeviceTensor attend(const Layer& layer, int index, const DeviceTensor& x, Pass& pass,
                        PendingCapture& capture) const;
    // Layer `index`'s queries and keys of x (projected, head-normed, rotated), captured where asked.
    std::pair<DeviceTensor, DeviceTensor> queriesKeys(const Layer& layer, int index,
                                                      const DeviceTensor& x, const Pass& pass,
                                                      PendingCapture& capture) const;
    // Whether the pass only needs `capture`'s queries and keys of its last layer.
    static bool wantsOnlyQueriesKeys(const CaptureRequest& capture, const variants::ForwardPlan& plan);
    void validateLearnedProjections(int64_t tokens, const variants::VariantSpec& variant) const;
    void checkTrainedPositions(const variants::VariantSpec& variant) const;
    void checkCapture(const ModelInput& input, const CaptureRequest& capture) const;
    float attentionScale() const; // what the fused route multiplies q·k by
    DeviceTensor attendFused(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                             bool windowed, const Pass& pass, PendingCapture& capture) const;
    DeviceTensor attendComposed(const Layer& layer, int index, DeviceTensor q, DeviceTensor k,
                                DeviceTensor v, Pass& pass, PendingCapture& capture) const;
    // The plan's head ablations of layer `index` on context [T, H·d], then its capture.
    void interveneOnHeads(int index, const Pass& pass, PendingCapture& capture,
                          DeviceTensor& context) const;
    variants::AttentionShape attentionShape(const ModelInput& input, const variants::VariantSpec& variant) const;
    void project(const Linear& linear, const DeviceTensor& x, DeviceTensor& out) const;
    void normalizeHeads(const Norm& norm, DeviceTensor& x) const;
    // The layer's weights as the cross-attention loops (variants/transformer_xl_recurrence.h,
    // funnel_pooling.h) read them; `xl` adds Transformer-XL's W_R, u and v.
    variants::CrossAttentionLayer crossAttention(const Layer& layer, bool xl) const;
    DeviceTensor attendSegment(const Layer& layer, int index, const DeviceTensor& x, Pass& pass,
                               PendingCapture& capture) const;

    // [SECTION] sub-layers: residual wiring, FFN, experts (transformer_sublayers.cpp)
    DeviceTensor applySublayer(const Sublayer& sublayer, const DeviceTensor& x, Pass& pass,
                               PendingCapture& capture) const;
    // What a pre-norm sub-layer read and added (CaptureRequest::sublayers).
    struct SublayerTaps {
        DeviceTensor input, update;
    };
    DeviceTensor residual(const Sublayer& sublayer, const DeviceTensor& x,
                          const SublayerFunction& function, SublayerTaps* taps = nullptr) const;
    // A parallel block's FFN (ModelSpec::parallelResidual): x + F(N(layerInput)), where x already
    // holds layerInput + attention.
    DeviceTensor applyParallelFfn(const Sublayer& sublayer, const DeviceTensor& layerInput,
                                  const DeviceTensor& x, Pass& pass, PendingCapture& capture) const;
    bool normsSublayerInput() const; // pre placement (and GTrXL): F reads N(x)
    const Norm& sublayerNorm(const Sublayer& sublayer) const;
    // What the sub-layer's function reads of x: N(x) where the block norms its input, else x.
    DeviceTensor sublayerInput(const Sublayer& sublayer, const DeviceTensor& x) const;
    DeviceTensor sublayerFunction(const Sublayer& sublayer, const DeviceTensor& x, Pass& pass,
                                  PendingCapture& capture) const;
    void normalize(const Norm& norm, const DeviceTensor& x, DeviceTensor& out) const;
    DeviceTensor gate(const Gate& gate, const DeviceTensor& x, const DeviceTensor& y) const;
    DeviceTensor feedForward(const Ffn& ffn, const DeviceTensor& x) const;

    // [SECTION] depth: the loop the ForwardPlan names (transformer_depth.cpp)
    DeviceTensor runDepth(DeviceTensor x, Pass& pass, std::vector<PendingCapture>& pending,
                          std::vector<DeviceTensor>* hidden,
                          std::optional<variants::ExitTracker>& exits, Trace& trace) const;
    DeviceTensor runStack(DeviceTensor x, Pass& pass, std::vector<PendingCapture>& pending,
                          std::vector<DeviceTensor>* hidden,
                          std::optional<variants::ExitTracker>& exits) const;
    DeviceTensor runAdaptiveComputation(const DeviceTensor& x, Pass& pass,
                                        std::vector<PendingCapture>& pending, Trace& trace) const;
    DeviceTensor runReversible(const DeviceTensor& x, Pass& pass,
                               std::vector<PendingCapture>& pending, Trace& trace) const;
    DeviceTensor runSegments(const DeviceTensor& x, Pass& pass,
                             std::vector<PendingCapture>& pending,
                             std::vector<DeviceTensor>* hidden, Trace& trace) const;
    DeviceTensor runFunnel(const DeviceTensor& x, Pass& pass, std::vector<PendingCapture>& pending,
                           std::vector<DeviceTensor>* hidden, Trace& trace) const;
    std::vector<Sublayer> sublayerOrder(const variants::VariantSpec& variant) const;
    int capturedLayers() const; // trace layers: the model's layers, or ACT's steps
    // The last layer a pass must run for `capture` (capture_depth.cpp): the highest captured one
    // when nothing later is needed and the plan's loop may stop early, else -1 (all of them).
    int lastLayerNeeded(const CaptureRequest& capture, const variants::ForwardPlan& plan) const;
    void trackExits(variants::ExitTracker& exits, int layer, const DeviceTensor& before, DeviceTensor& after) const;
    void collect(const PendingCapture& pending, const CaptureRequest& capture, LayerTrace& layer) const;
    void collectSublayers(const PendingCapture& pending, LayerTrace& layer) const;
    void collectPlan(const variants::AttentionPlan& plan, Trace& trace) const;
    // The LM head on a final (normed) hidden state [T, D] -> logits [T, V], soft-capped where
    // the checkpoint says so.
    DeviceTensor headLogits(const DeviceTensor& x) const;
    void requireLmHead() const;

    ModelSpec spec_;
    variants::BlockSpec block_; // the wiring: derived from the architecture, or the zoo's own
    Backend& backend_;
    DeviceTensor tokenEmbedding_, positionEmbedding_, tokenTypeEmbedding_;
    Tensor relativeBias_; // zoo T5 buckets [buckets, H], kept on the host for the attention plan
    variants::AdaptiveComputation act_; // zoo ACT: max steps, threshold, halting unit
    variants::Normalization normalization_;
    Norm embeddingNorm_, finalNorm_;
    std::vector<Layer> layers_;
    LmHead lmHead_;
};

// Reads config.json and the weights of a checkpoint folder and uploads them to `backend`.
// Throws io::CheckpointError or ModelError with a one-line reason.
std::unique_ptr<TransformerModel> loadModel(const std::string& folder, Backend& backend);
} // namespace headlight
