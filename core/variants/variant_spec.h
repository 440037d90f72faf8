#pragma once
// VariantSpec: which X-former options a forward pass uses, composed from the families of
// docs/variants.md (its numbered options). The same JSON is a `--variant` file, the `headlight`
// section of a zoo checkpoint's config.json and the variant part of a Scenario. Every field's
// default is the checkpoint's own vanilla behaviour, so `{}` changes nothing.
//
// Index: AttentionKernel · SparseMask · Prior · AdaptiveSpan · TalkingHeads · WeightRule ·
// PositionKind · EarlyExit · KnnLm · VariantSpec · parseVariantSpec

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::variants {

class VariantError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Item 3–7: how softmax(QKᵀ)V itself is computed or approximated.
enum class AttentionKernel {
    Softmax,    // exact scores → (+biases) → (mask) → softmax → V
    Lsh,        // Reformer LSH buckets (item 3)
    Favor,      // Performer FAVOR+ positive random features (item 4)
    Rfa,        // random Fourier (trigonometric) features, Performer v1 / RFA (item 4)
    LinearElu,  // Linear Transformer φ = elu + 1 (item 4)
    ProbSparse, // Informer query selection (item 5)
    Linformer,  // Linformer K/V projection to k rows (item 6)
    MemoryCompressed, // memory-compressed attention: strided pooling of K/V (item 6)
    Nystrom,    // Nyströmformer landmarks (item 7)
};

// Item 2: the nominal attention pattern, a union of atomic parts. Each part allows key j for
// query i when its rule holds; causality and padding still apply on top.
struct MaskPart {
    enum class Kind {
        Global,      // tokens in `tokens` see and are seen by every token
        Band,        // |i − j| ≤ window, or ≤ windows[h mod n] for head h (multi-scale spans)
        Dilated,     // |i − j| ≤ window·dilation and (i − j) divisible by dilation
        Random,      // `count` distinct random keys per query (seeded)
        Block,       // |⌊i / size⌋ − ⌊j / size⌋| ≤ window (window 0: block-local)
        RandomBlock, // per query block, `count` distinct random key blocks of `size` farther than `window` blocks (BigBird)
        Strided,     // (i − j) divisible by `stride` (Sparse Transformer)
        Summary,     // j mod `size` ≥ size − `count` (Sparse Transformer fixed: summary columns)
        Local,       // j in query i's block of `size` or the `window` tokens before it (Image Transformer 1D)
    };
    Kind kind = Kind::Band;
    int window = 0, dilation = 1, count = 0, size = 0, stride = 0;
    std::vector<int> tokens;  // Global; negative counts from the end
    std::vector<int> windows; // Band: one window per head, cycling; empty = `window` for all

    bool operator==(const MaskPart&) const = default;
};

struct SparseMask {
    std::string preset; // the named model the parts came from, "" for a hand-made composition
    std::vector<MaskPart> parts;
    uint64_t seed = 0;

    bool operator==(const SparseMask&) const = default;
};

// Item 8: a prior added to layer l's scores before the softmax (Lin et al. 2021, A Survey of Transformers, Eq. 22).
struct Prior {
    enum class Kind {
        None,
        Residual,     // RealFormer: S_l = QKᵀ/√d + S_{l−1} (He et al. 2020)
        ResidualMean, // running mean of the raw scores of layers ≤ l
        Share,        // Lazyformer: layers reuse the attention of the layer that starts each group
        Gaussian,     // local prior −(i − j)² / (2σ²) (Guo et al. 2019c)
    };
    Kind kind = Kind::None;
    int every = 2;       // Share: group size
    float sigma = 4.0f;  // Gaussian: width in tokens

    bool operator==(const Prior&) const = default;
};

// Item 9: adaptive attention span m_z(x) = clamp((R + z − x) / R, 0, 1), x = i − j
// (Sukhbaatar et al. 2019a); weights are masked then renormalised.
struct AdaptiveSpan {
    bool enabled = false;
    std::vector<float> spans; // z per head (one value = every head)
    float ramp = 32.0f;       // R

    bool operator==(const AdaptiveSpan&) const = default;
};

// Item 10: talking-heads attention (Shazeer et al. 2020): scores and weights mixed across heads
// by P_l (before the softmax) and P_w (after it); [H × H] row-major, empty = identity.
struct TalkingHeads {
    bool enabled = false;
    std::vector<float> logitsMix, weightsMix;

    bool operator==(const TalkingHeads&) const = default;
};

// Item 21: the rule that turns a row of scores L into weights, in place of the softmax
// (variants/sink_softmax.h, sigmoid_attention.h). Rows then need not sum to 1.
struct WeightRule {
    enum class Kind {
        Softmax,     // the checkpoint's own softmax
        SinkSoftmax, // a_ij = e^(L_ij) / (e^b + Σ_k e^(L_ik)): one extra logit b (Miller 2023;
                     // gpt-oss)
        Sigmoid,     // a_ij = σ(L_ij + b) for allowed keys (Ramapuram et al. 2024)
    };
    Kind kind = Kind::Softmax;
    float sink = 0.0f;         // SinkSoftmax: the extra logit b (0: "softmax off by one")
    std::optional<float> bias; // Sigmoid: b; absent: −ln n, n the keys of the pass

    bool operator==(const WeightRule&) const = default;
};

// Item 11: where positions enter. Learned, Rope, T5 and Xl name a zoo checkpoint's trained kind
// (Xl: Transformer-XL's relative terms, item 17).
enum class PositionKind { Checkpoint, None, Sinusoidal, Alibi, Learned, Rope, T5, Xl };

// Item 17: Transformer-XL segment recurrence (Dai et al. 2019): the sequence runs in segments of
// `segment` tokens; each attention sub-layer also reads its inputs from earlier segments, the last
// `memory` rows, and (Compressive Transformer, Rae et al. 2020) `compressed` slots, each the mean
// of `rate` rows that left the memory (variants/transformer_xl_recurrence.cpp,
// compressive_memory.cpp).
struct Recurrence {
    int segment = 1;    // tokens per segment
    int memory = 0;     // a multiple of segment
    int compressed = 0; // 0: no compressed memory
    int rate = 2;       // divides segment when compressed > 0

    bool operator==(const Recurrence&) const = default;
};

// Item 16: stop at the first layer whose criterion passes (DeeBERT, PABEE, CALM), reading each
// layer's state through the model's own LM head.
struct EarlyExit {
    enum class Criterion { None, Entropy, Patience, SoftmaxResponse, Saturation };
    Criterion criterion = Criterion::None;
    float threshold = 0.0f; // Entropy: nats; SoftmaxResponse: top probability; Saturation: cosine
    int patience = 2;       // Patience: layers with an unchanged argmax

    bool operator==(const EarlyExit&) const = default;
};

// Item 18: kNN-LM (Khandelwal et al. 2020), the next-token distribution mixed with one read from
// a datastore built from a user text: p = λ·p_kNN + (1 − λ)·p_LM (variants/knn_lm.h).
struct KnnLm {
    std::string datastore;    // the text file; loadVariantSpec resolves it against the spec's folder
    int k = 8;                // neighbours retrieved per token
    float lambda = 0.25f;     // weight of p_kNN in the mixture
    float temperature = 1.0f; // p_kNN ∝ Σ exp(−d / temperature), d the squared L2 distance

    bool operator==(const KnnLm&) const = default;
};

// Items 12–15, 19, 20: the architecture keys of a zoo checkpoint (docs/zoo-format.md). They
// describe how trained weights are wired, so only a `headlight` checkpoint's config sets them.
struct BlockSpec {
    enum class Norm { Layer, Rms, Scale, Ada };
    enum class Placement { Post, Pre };
    enum class Residual { Plain, ReZero, Gtrxl };
    enum class Order { Standard, Macaron, Sandwich };
    enum class Routing { TopK, Switch, Hash };
    Norm norm = Norm::Layer;
    Placement placement = Placement::Post;
    Residual residual = Residual::Plain;
    Order order = Order::Standard;
    int sandwich = 0;                 // k of a^k (af)^(L−k) f^k
    std::string activation = "gelu"; // relu, gelu, gelu_tanh, swish, glu, geglu, swiglu, reglu
    int experts = 0;                  // 0: dense FFN
    Routing routing = Routing::TopK;
    int topK = 2;
    int t5Buckets = 32, t5MaxDistance = 128;
    int actSteps = 0;                 // > 0: Universal Transformer with ACT
    float actThreshold = 0.99f;
    bool reversible = false;
    // Funnel Transformer (Dai et al. 2020): layers per block, the hidden sequence mean-pooled by
    // `funnelStride` between blocks (variants/funnel_pooling.cpp); empty: no pooling.
    std::vector<int> funnelBlocks;
    int funnelStride = 2;

    bool operator==(const BlockSpec&) const = default;
};

struct VariantSpec {
    AttentionKernel kernel = AttentionKernel::Softmax;
    int features = 64;       // Favor / Rfa: random features m
    bool orthogonal = true;  // Favor: orthogonal random features
    int lshBuckets = 8, lshRounds = 1, lshChunk = 32; // Lsh
    bool sharedQk = true;    // Lsh: keys = normalised queries
    float probSparseFactor = 5.0f; // ProbSparse: u = c·ln T active queries
    int projected = 32;      // Linformer: k; MemoryCompressed: stride
    int landmarks = 16, pinvIterations = 6; // Nystrom
    uint64_t seed = 0;       // random features and LSH rotations (random mask parts: SparseMask::seed)

    std::optional<SparseMask> mask;
    Prior prior;
    AdaptiveSpan span;
    TalkingHeads talkingHeads;
    WeightRule weightRule;
    PositionKind position = PositionKind::Checkpoint;
    bool dropFfn = false;    // item 13: skip every FFN sub-layer (Dong et al. 2021 rank collapse)
    EarlyExit earlyExit;
    std::optional<Recurrence> recurrence; // item 17: runs segment by segment
    std::optional<KnnLm> knn;       // item 18: runs through variants::forwardKnn, which holds the datastore
    std::optional<BlockSpec> block; // set only from a zoo checkpoint's config

    bool isVanilla() const;       // no option changes the checkpoint's own forward pass
    bool needsComposedPath() const; // attention cannot use the backend's fused kernel
    bool operator==(const VariantSpec&) const = default;
};

// Parses the JSON text of a variant spec. Throws VariantError naming the offending key for an
// unknown key or preset, a wrong type, or a value out of range. A relative knn.datastore path is
// kept as written; loadVariantSpec resolves it against the folder of the spec file.
VariantSpec parseVariantSpec(const std::string& jsonText);
VariantSpec loadVariantSpec(const std::string& path);
} // namespace headlight::variants
