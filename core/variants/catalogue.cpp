#include "variants/catalogue.h"

namespace headlight::variants {
namespace {

constexpr ParameterControl integer(const char* key, const char* label, int low, int high,
                                   int fallback, int step = 1) {
    return {key, label, double(low), double(high), double(step), double(fallback), 0};
}

constexpr ParameterControl real(const char* key, const char* label, double low, double high,
                                double step, double fallback) {
    return {key, label, low, high, step, fallback, 2};
}
} // namespace

const char* needsName(Needs needs) {
    switch (needs) {
    case Needs::Exact:
        return "exact";
    case Needs::Approximate:
        return "approximate";
    case Needs::Toggle:
        return "toggle";
    case Needs::Weights:
        return "weights";
    }
    return "";
}

const char* needsMeaning(Needs needs) {
    switch (needs) {
    case Needs::Exact:
        return "reproduces the checkpoint's own computation";
    case Needs::Approximate:
        return "approximates the attention the checkpoint was trained with, without training";
    case Needs::Toggle:
        return "runs on any checkpoint, but changes what it computes";
    case Needs::Weights:
        return "meaningful only with weights trained for it; here it runs as a toggle";
    }
    return "";
}

// Formulas state what the code computes (core/variants/*.cpp), not only what the paper wrote.
const std::vector<CatalogueEntry>& catalogue() {
    using N = Needs;
    static const std::vector<CatalogueEntry> entries{
        {1, "reference", "Vanilla Transformer (the checkpoint's own Post-LN or Pre-LN pass)", "{}",
         "", "softmax(QKᵀ/√d + bias)·V",
         "Vaswani et al. 2017; Devlin et al. 2019; Radford et al. 2019", N::Exact},
        {2, "sparse (position-based)", "Star-Transformer", R"({"mask": {"preset": "star"}})", "",
         "|i − j| ≤ 1, and token 0 sees and is seen by all", "Guo et al. 2019a", N::Approximate,
         "Star-Transformer"},
        {2, "sparse (position-based)", "Longformer", R"({"mask": {"preset": "longformer"}})",
         "window = 2, dilation = 1, global = [0]", "|i − j| ≤ w (dilated by d), plus global tokens",
         "Beltagy et al. 2020", N::Approximate, "Longformer",
         integer("window", "Window w", 0, 64, 2)},
        {2, "sparse (position-based)", "BigBird", R"({"mask": {"preset": "bigbird"}})",
         "block = 4, random = 1, global = [0], seed = 0",
         "|⌊i/b⌋ − ⌊j/b⌋| ≤ 1, r random blocks, global tokens", "Zaheer et al. 2020",
         N::Approximate, "BigBird", integer("block", "Block b", 1, 64, 4)},
        {2, "sparse (position-based)", "Sparse Transformer (strided)",
         R"({"mask": {"preset": "sparse_strided"}})", "stride = 4",
         "|i − j| < l, or l divides i − j", "Child et al. 2019", N::Approximate,
         "Sparse Transformer (strided)", integer("stride", "Stride l", 1, 64, 4)},
        {2, "sparse (position-based)", "Sparse Transformer (fixed)",
         R"({"mask": {"preset": "sparse_fixed"}})", "block = 4, summary = 1",
         "⌊i/l⌋ = ⌊j/l⌋, or j mod l ≥ l − c", "Child et al. 2019", N::Approximate,
         "Sparse Transformer (fixed)", integer("block", "Block l", 1, 64, 4)},
        {2, "sparse (position-based)", "Image Transformer (1D local)",
         R"({"mask": {"preset": "image_local"}})", "block = 4, memory = 4",
         "j in i's block of b, or the m tokens before it", "Parmar et al. 2018", N::Approximate,
         "Image Transformer (1D local)", integer("block", "Block b", 1, 64, 4)},
        {2, "sparse (position-based)", "Blockwise attention",
         R"({"mask": {"preset": "blockwise"}})", "block = 4", "⌊i/b⌋ = ⌊j/b⌋", "Qiu et al. 2019",
         N::Approximate, "Blockwise", integer("block", "Block b", 1, 64, 4)},
        {2, "sparse (position-based)", "Multi-scale spans", R"({"mask": {"preset": "multiscale"}})",
         "windows = [1, 2, 4, 8] (per head, cycling)",
         "|i − j| ≤ w_h, w = [1, 2, 4, 8] cycling over heads", "Guo et al. 2020", N::Approximate,
         "Multi-scale spans"},
        {2, "sparse (position-based)", "Sparse-mask composer",
         R"({"mask": {"parts": [{"kind": "band", "window": 2}, {"kind": "global", "tokens": [0]}]}})",
         "kinds: global, band, dilated, random, block, random_block, strided, summary, local",
         "key j is allowed for query i when any part's rule holds", "survey §4.1.1",
         N::Approximate},
        {3, "sparse (content-based)", "Reformer LSH attention",
         R"({"attention": {"kernel": "lsh"}})",
         "buckets = 8, rounds = 1, chunk = 32, shared_qk = true, seed = 0",
         "h(x) = argmax([xR; −xR]); attend within a bucket, in chunks of the sorted order",
         "Kitaev et al. 2020", N::Approximate, "Reformer LSH",
         integer("buckets", "Buckets", 2, 64, 8, 2)},
        {4, "linearized", "Performer FAVOR+ (positive orthogonal random features)",
         R"({"attention": {"kernel": "favor"}})", "features = 64, orthogonal = true, seed = 0",
         "softmax(QKᵀ)V ≈ φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1), φ(x) = exp(ωᵀx − ‖x‖²/2)/√m",
         "Choromanski et al. 2020b", N::Approximate, "Performer FAVOR+",
         integer("features", "Features m", 4, 1024, 64)},
        {4, "linearized", "Random Fourier features (Performer v1 / RFA)",
         R"({"attention": {"kernel": "rfa"}})", "features = 64, seed = 0",
         "φ(x) = [sin(ωᵀx̂), cos(ωᵀx̂)]/√m, x̂ = x/‖x‖", "Choromanski et al. 2020a; Peng et al. 2021",
         N::Approximate, "Random Fourier features (RFA)",
         integer("features", "Features m", 4, 1024, 64)},
        {4, "linearized", "Linear Transformer (elu + 1)",
         R"({"attention": {"kernel": "linear_elu"}})", "",
         "φ(x) = elu(x) + 1; out = φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)", "Katharopoulos et al. 2020",
         N::Toggle, "Linear Transformer (elu + 1)"},
        {5, "query prototyping", "Informer ProbSparse attention",
         R"({"attention": {"kernel": "probsparse"}})",
         "factor = 5 (u = factor·ln T active queries)",
         "M(q, K) = max_j s_ij − mean_j s_ij; the top u = c·ln T queries attend, the rest output "
         "mean(V)",
         "Zhou et al. 2021", N::Approximate, "Informer ProbSparse",
         real("factor", "Factor c", 0.5, 50.0, 0.5, 5.0)},
        {6, "memory compression", "Linformer (pooling, or a zoo checkpoint's learned E, F)",
         R"({"attention": {"kernel": "linformer"}})", "projected = 32 (k)",
         "softmax(Q(EK)ᵀ/√d)·(FV), E, F pool T keys to k rows", "Wang et al. 2020a", N::Approximate,
         "Linformer", integer("projected", "Rows k", 1, 512, 32)},
        {6, "memory compression", "Memory-compressed attention",
         R"({"attention": {"kernel": "memory_compressed"}})", "projected = 32 (pooling stride)",
         "K and V mean-pooled with stride k before the softmax", "Liu et al. 2018", N::Approximate,
         "Memory-compressed", integer("projected", "Stride k", 1, 512, 32)},
        {7, "low rank", "Nyströmformer", R"({"attention": {"kernel": "nystrom"}})",
         "landmarks = 16, pinv_iterations = 6",
         "softmax(QK̃ᵀ)·pinv(softmax(Q̃K̃ᵀ))·softmax(Q̃Kᵀ), landmarks = segment means",
         "Xiong et al. 2021", N::Approximate, "Nyströmformer",
         integer("landmarks", "Landmarks", 1, 256, 16)},
        {8, "prior attention", "RealFormer residual attention",
         R"({"prior": {"kind": "residual"}})", "", "S_l = QKᵀ/√d + S_{l−1}", "He et al. 2020",
         N::Weights, "RealFormer residual"},
        {8, "prior attention", "RealFormer, running mean",
         R"({"prior": {"kind": "residual_mean"}})", "", "S_l = (raw_l + l·S_{l−1}) / (l + 1)",
         "He et al. 2020 (fn. 6)", N::Weights, "RealFormer running mean"},
        {8, "prior attention", "Lazyformer attention sharing", R"({"prior": {"kind": "share"}})",
         "every = 2", "A_l = A of the first layer of its group of k", "Ying et al. 2021", N::Toggle,
         "Lazyformer sharing", integer("every", "Group k", 1, 48, 2)},
        {8, "prior attention", "Gaussian local prior", R"({"prior": {"kind": "gaussian"}})",
         "sigma = 4", "S_ij += −(i − j)² / (2σ²)", "Yang et al. 2018; Guo et al. 2019c", N::Toggle,
         "Gaussian local prior", real("sigma", "σ (tokens)", 0.5, 256.0, 0.5, 4.0)},
        {9, "multi-head", "Adaptive attention span (hand-set z)", R"({"span": {"z": [8]}})",
         "z (per head, cycling), ramp = 32",
         "a_ij ∝ m_z(|i − j|)·e^(s_ij), m_z(x) = clamp((R + z − x)/R, 0, 1)",
         "Sukhbaatar et al. 2019a", N::Toggle, "Adaptive attention span",
         integer("z", "Span z", 0, 1024, 8)},
        {10, "multi-head", "Talking-heads attention", R"({"talking_heads": {}})",
         "logits, weights: H × H mixes (identity when absent)",
         "L_a = Σ_b P_l[a,b]·J_b before the softmax, U_a = Σ_b P_w[a,b]·W_b after",
         "Shazeer et al. 2020", N::Exact, "Talking heads (identity mixes)"},
        {11, "position encoding", "No position encoding (NoPE)", R"({"position": "none"})", "",
         "no position signal: tokens form a set", "Irie et al. 2019; Haviv et al. 2022", N::Toggle,
         "None (NoPE)"},
        {11, "position encoding", "Sinusoidal position encoding", R"({"position": "sinusoidal"})",
         "", "PE[t, 2i] = sin(t/10000^(2i/D)), PE[t, 2i+1] = cos(…)", "Vaswani et al. 2017",
         N::Toggle, "Sinusoidal"},
        {11, "position encoding", "ALiBi linear biases", R"({"position": "alibi"})",
         "slopes 2^(-8k/n), interleaved for n not a power of two",
         "S_ij += −m_h·|i − j|, m_h = 2^(−8h/H)", "Press et al. 2022", N::Toggle, "ALiBi"},
        {11, "position encoding", "Learned absolute positions (zoo)", R"({"position": "learned"})",
         "", "x_t = e_t + P[t], P the trained table", "Gehring et al. 2017; Devlin et al. 2019",
         N::Weights},
        {11, "position encoding", "Rotary position embedding", R"({"position": "rope"})",
         "theta = 10000", "q, k rotated by the angle t·θ^(−2i/d) in each pair of dimensions i",
         "Su et al. 2021", N::Toggle},
        {11, "position encoding", "T5 relative position buckets (zoo)",
         R"({"position": "t5", "t5": {}})", "buckets = 32, max_distance = 128",
         "S_ij += b_h[bucket(j − i)], a trained bias per head and bucket", "Raffel et al. 2020",
         N::Weights},
        {12, "normalisation", "Post-LN / Pre-LN placement (zoo)",
         R"({"norm": {"placement": "pre"}})", "placement = post",
         "Post: x = LN(x + F(x)); Pre: x = x + F(LN(x))", "Vaswani et al. 2017; Xiong et al. 2020",
         N::Weights},
        {12, "normalisation", "RMSNorm (zoo)", R"({"norm": {"kind": "rms"}})", "",
         "g·x/√(mean(x²) + eps)", "Zhang & Sennrich 2019", N::Weights},
        {12, "normalisation", "ScaleNorm (zoo)", R"({"norm": {"kind": "scale"}})",
         "g·x/√(‖x‖² + eps)", "", "Nguyen & Salazar 2019", N::Weights},
        {12, "normalisation", "AdaNorm (zoo)", R"({"norm": {"kind": "ada"}})", "k = 0.1, C = 1", "",
         "Xu et al. 2019", N::Weights},
        {12, "normalisation", "ReZero (zoo)", R"({"norm": {"residual": "rezero"}})",
         "α per sub-layer, no norms", "x = x + α·F(x), α trained from 0", "Bachlechner et al. 2020",
         N::Weights},
        {12, "normalisation", "GTrXL gate (zoo)",
         R"({"norm": {"placement": "pre", "residual": "gtrxl"}})",
         "GRU-style gate per sub-layer, b_g", "", "Parisotto et al. 2019", N::Weights},
        {13, "feed-forward", "Drop the FFN sub-layers", R"({"drop_ffn": true})", "",
         "x = x + Attn(x) only: attention without the FFN", "Yang et al. 2020; Dong et al. 2021",
         N::Toggle, "Drop every FFN sub-layer"},
        {13, "feed-forward", "FFN activation: ReLU, GELU, Swish (zoo)",
         R"({"ffn": {"activation": "swish"}})", "activation = gelu", "",
         "Ramachandran et al. 2018; Hendrycks & Gimpel 2016", N::Weights},
        {13, "feed-forward", "GLU family: GLU, GEGLU, SwiGLU, ReGLU (zoo)",
         R"({"ffn": {"activation": "swiglu"}})", "", "", "Dauphin et al. 2017; Shazeer 2020",
         N::Weights},
        {14, "mixture of experts", "Top-k routing (GShard) (zoo)",
         R"({"ffn": {"experts": 4, "routing": "top_k", "k": 2}})", "experts, k = 2", "",
         "Lepikhin et al. 2020", N::Weights},
        {14, "mixture of experts", "Switch routing (top-1) (zoo)",
         R"({"ffn": {"experts": 4, "routing": "switch"}})", "experts", "", "Fedus et al. 2021",
         N::Weights},
        {14, "mixture of experts", "Hash routing (zoo)",
         R"({"ffn": {"experts": 4, "routing": "hash"}})", "experts", "", "Roller et al. 2021",
         N::Weights},
        {16, "adaptive computation", "Early exit by entropy (DeeBERT)",
         R"({"early_exit": {"criterion": "entropy", "threshold": 2.0}})",
         "threshold (nats); tied LM head", "exit at the first layer with H(softmax(W_E·h_l)) < τ",
         "Xin et al. 2020", N::Approximate, "Entropy (DeeBERT)",
         real("threshold", "τ (nats)", 0.0, 20.0, 0.1, 2.0)},
        {16, "adaptive computation", "Early exit by patience (PABEE)",
         R"({"early_exit": {"criterion": "patience", "patience": 2}})",
         "patience = 2; tied LM head", "exit once argmax(W_E·h_l) is unchanged for p layers",
         "Zhou et al. 2020", N::Approximate, "Patience (PABEE)",
         integer("patience", "Patience p", 1, 48, 2)},
        {16, "adaptive computation", "Early exit by softmax response (CALM)",
         R"({"early_exit": {"criterion": "softmax_response", "threshold": 0.9}})",
         "threshold; tied LM head", "exit when max softmax(W_E·h_l) ≥ τ", "Schuster et al. 2022",
         N::Approximate, "Softmax response (CALM)",
         real("threshold", "τ (probability)", 0.0, 1.0, 0.05, 0.9)},
        {16, "adaptive computation", "Early exit by hidden-state saturation (CALM)",
         R"({"early_exit": {"criterion": "saturation", "threshold": 0.99}})", "threshold (cosine)",
         "exit when cos(h_l, h_{l−1}) ≥ τ", "Schuster et al. 2022", N::Approximate,
         "Saturation (CALM)", real("threshold", "τ (cosine)", 0.0, 1.0, 0.01, 0.99)},
        {15, "adaptive computation", "Universal Transformer with ACT (zoo)",
         R"({"act": {"max_steps": 8}})", "max_steps, threshold = 0.99", "",
         "Dehghani et al. 2019; Graves 2016", N::Weights},
        {17, "recurrence", "Transformer-XL segment recurrence",
         R"({"recurrence": {"segment": 16, "memory": 16}})",
         "segment (tokens), memory = 0 (a multiple of segment); causal",
         "segments of 16 tokens; keys and values also from the M states before the segment",
         "Dai et al. 2019", N::Approximate, "Transformer-XL recurrence (segments of 16)",
         integer("memory", "Memory M", 0, 1024, 16, 16)},
        {17, "recurrence", "Transformer-XL relative positions (zoo)",
         R"({"position": "xl", "recurrence": {"segment": 16, "memory": 16}})",
         "W_R, u, v per layer", "a_ij = ((q_i + u)·k_j + (q_i + v)·W_R R_{i−j}) / √d",
         "Dai et al. 2019", N::Weights},
        {17, "recurrence", "Compressive Transformer memory (mean pooling)",
         R"({"recurrence": {"segment": 16, "memory": 16, "compressed": 8, "rate": 2}})",
         "compressed = 0 slots, rate = 2",
         "rows leaving the memory are mean-pooled c at a time into at most C slots",
         "Rae et al. 2020", N::Approximate},
        {18, "external memory", "kNN-LM over a datastore built from a text",
         R"({"knn": {"datastore": "corpus.txt", "k": 8, "lambda": 0.25}})",
         "datastore (text file), k = 8, lambda = 0.25, temperature = 1; causal, tied LM head",
         "p = λ·p_kNN + (1 − λ)·p_LM, p_kNN(y) ∝ Σ_{neighbours with next token y} exp(−d_i/τ)",
         "Khandelwal et al. 2020", N::Exact},
        {19, "memory efficiency", "Reversible residual layers (zoo)", R"({"reversible": true})",
         "pre placement, standard order", "", "Gomez et al. 2017; Kitaev et al. 2020", N::Weights},
        {20, "sub-layer order", "Macaron (FFN ½ · attention · FFN ½) (zoo)",
         R"({"order": {"kind": "macaron"}})", "", "", "Lu et al. 2020", N::Weights},
        {20, "sub-layer order", "Sandwich a^k (af)^(L−k) f^k (zoo)",
         R"({"order": {"kind": "sandwich", "sandwich": 1}})", "sandwich = k", "",
         "Press et al. 2020", N::Weights},
        {20, "sequence pooling", "Funnel Transformer (pooled blocks, up-sampled) (zoo)",
         R"({"funnel": {"blocks": [2, 2], "stride": 2}})",
         "blocks (layers each), stride = 2; encoder, learned / sinusoidal / no positions", "",
         "Dai et al. 2020", N::Weights},
    };
    return entries;
}
} // namespace headlight::variants
