#include "variants/catalogue.h"

namespace headlight::variants {

const char* needsName(Needs needs) {
    switch (needs) {
    case Needs::Exact: return "exact";
    case Needs::Approximate: return "approximate";
    case Needs::Toggle: return "toggle";
    case Needs::Weights: return "weights";
    }
    return "";
}

const std::vector<CatalogueEntry>& catalogue() {
    using N = Needs;
    static const std::vector<CatalogueEntry> entries{
        {1, "reference", "Vanilla Transformer (the checkpoint's own Post-LN or Pre-LN pass)", "{}", "",
         "Vaswani et al. 2017; Devlin et al. 2019; Radford et al. 2019", N::Exact},
        {2, "sparse (position-based)", "Star-Transformer", R"({"mask": {"preset": "star"}})", "",
         "Guo et al. 2019a", N::Approximate},
        {2, "sparse (position-based)", "Longformer", R"({"mask": {"preset": "longformer"}})",
         "window = 2, dilation = 1, global = [0]", "Beltagy et al. 2020", N::Approximate},
        {2, "sparse (position-based)", "BigBird", R"({"mask": {"preset": "bigbird"}})",
         "block = 4, random = 1, global = [0], seed = 0", "Zaheer et al. 2020", N::Approximate},
        {2, "sparse (position-based)", "Sparse Transformer (strided)", R"({"mask": {"preset": "sparse_strided"}})",
         "stride = 4", "Child et al. 2019", N::Approximate},
        {2, "sparse (position-based)", "Sparse Transformer (fixed)", R"({"mask": {"preset": "sparse_fixed"}})",
         "block = 4, summary = 1", "Child et al. 2019", N::Approximate},
        {2, "sparse (position-based)", "Image Transformer (1D local)", R"({"mask": {"preset": "image_local"}})",
         "block = 4, memory = 4", "Parmar et al. 2018", N::Approximate},
        {2, "sparse (position-based)", "Blockwise attention", R"({"mask": {"preset": "blockwise"}})", "block = 4",
         "Qiu et al. 2019", N::Approximate},
        {2, "sparse (position-based)", "Multi-scale spans", R"({"mask": {"preset": "multiscale"}})",
         "windows = [1, 2, 4, 8] (per head, cycling)", "Guo et al. 2020", N::Approximate},
        {2, "sparse (position-based)", "Sparse-mask composer",
         R"({"mask": {"parts": [{"kind": "band", "window": 2}, {"kind": "global", "tokens": [0]}]}})",
         "kinds: global, band, dilated, random, block, random_block, strided, summary, local", "survey §4.1.1",
         N::Approximate},
        {3, "sparse (content-based)", "Reformer LSH attention", R"({"attention": {"kernel": "lsh"}})",
         "buckets = 8, rounds = 1, chunk = 32, shared_qk = true, seed = 0", "Kitaev et al. 2020", N::Approximate},
        {4, "linearized", "Performer FAVOR+ (positive orthogonal random features)",
         R"({"attention": {"kernel": "favor"}})", "features = 64, orthogonal = true, seed = 0",
         "Choromanski et al. 2020b", N::Approximate},
        {4, "linearized", "Random Fourier features (Performer v1 / RFA)", R"({"attention": {"kernel": "rfa"}})",
         "features = 64, seed = 0", "Choromanski et al. 2020a; Peng et al. 2021", N::Approximate},
        {4, "linearized", "Linear Transformer (elu + 1)", R"({"attention": {"kernel": "linear_elu"}})", "",
         "Katharopoulos et al. 2020", N::Toggle},
        {5, "query prototyping", "Informer ProbSparse attention", R"({"attention": {"kernel": "probsparse"}})",
         "factor = 5 (u = factor·ln T active queries)", "Zhou et al. 2021", N::Approximate},
        {6, "memory compression", "Linformer (pooling projections)", R"({"attention": {"kernel": "linformer"}})",
         "projected = 32 (k)", "Wang et al. 2020a", N::Approximate},
        {6, "memory compression", "Memory-compressed attention", R"({"attention": {"kernel": "memory_compressed"}})",
         "projected = 32 (pooling stride)", "Liu et al. 2018", N::Approximate},
        {7, "low rank", "Nyströmformer", R"({"attention": {"kernel": "nystrom"}})",
         "landmarks = 16, pinv_iterations = 6", "Xiong et al. 2021", N::Approximate},
        {8, "prior attention", "RealFormer residual attention", R"({"prior": {"kind": "residual"}})", "",
         "He et al. 2020", N::Weights},
        {8, "prior attention", "RealFormer, running mean", R"({"prior": {"kind": "residual_mean"}})", "",
         "He et al. 2020 (fn. 6)", N::Weights},
        {8, "prior attention", "Lazyformer attention sharing", R"({"prior": {"kind": "share"}})", "every = 2",
         "Ying et al. 2021", N::Toggle},
        {8, "prior attention", "Gaussian local prior", R"({"prior": {"kind": "gaussian"}})", "sigma = 4",
         "Yang et al. 2018; Guo et al. 2019c", N::Toggle},
        {9, "multi-head", "Adaptive attention span (hand-set z)", R"({"span": {"z": [8]}})",
         "z (per head, cycling), ramp = 32", "Sukhbaatar et al. 2019a", N::Toggle},
        {10, "multi-head", "Talking-heads attention", R"({"talking_heads": {}})",
         "logits, weights: H × H mixes (identity when absent)", "Shazeer et al. 2020", N::Exact},
        {11, "position encoding", "No position encoding (NoPE)", R"({"position": "none"})", "",
         "Irie et al. 2019; Haviv et al. 2022", N::Toggle},
        {11, "position encoding", "Sinusoidal position encoding", R"({"position": "sinusoidal"})", "",
         "Vaswani et al. 2017", N::Toggle},
        {11, "position encoding", "ALiBi linear biases", R"({"position": "alibi"})",
         "slopes 2^(-8k/n), interleaved for n not a power of two", "Press et al. 2022", N::Toggle},
        {13, "feed-forward", "Drop the FFN sub-layers", R"({"drop_ffn": true})", "", "Yang et al. 2020; Dong et al. 2021",
         N::Toggle},
    };
    return entries;
}
} // namespace headlight::variants
