#pragma once
// The query-key embedding of one head, after AttentionViz (Yeh, Chen, Wang, Hu, Shen, Tang,
// Wattenberg and Viégas 2023, "AttentionViz: A Global View of Transformer Attention", IEEE VIS,
// §4.1 "Vector normalization"): the head's queries and keys (post-RoPE, as attention read them:
// CaptureRequest::queriesKeys) drawn as points of one 2-D plane, so that a query lies near the
// keys it attends to. Two transformations that leave every attention row unchanged make distance
// follow the dot product, as the paper's key scaling and key translation do (the spreads are
// measured about each set's own centroid here, so that both properties hold at once):
//   scaling       q' = c·q and k' = k/c with c = √(mean‖k − k̄‖ / mean‖q − q̄‖): q'·k' = q·k, and
//                 queries and keys spread equally about their centroids;
//   translation   k'' = k' − k̄' + q̄': q'·k'' = q·k + q'·(q̄' − k̄') adds the same number to every
//                 logit of a query's row, which softmax ignores; the two centroids coincide.
// Then ‖q' − k''‖² = ‖q'‖² + ‖k''‖² − 2 q'·k'', so among keys of similar norm the nearest to a
// query are those with the largest logit. The 2n points (n valid tokens) are projected together
// onto the two leading principal components of their joint covariance (Eigen's
// SelfAdjointEigenSolver, in double); each component's sign makes its largest-magnitude loading
// positive (the convention of scikit-learn's svd_flip), so the picture is deterministic.
// Padding tokens (valid 0) take no part and get NaN coordinates.

#include "tensor/tensor.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace headlight::analysis {

struct QueryKeyEmbedding {
    int tokens = 0;
    std::vector<float> queries;        // [T, 2] (PC1, PC2) of each query; NaN for padding
    std::vector<float> keys;           // [T, 2] of each key
    std::array<double, 2> explained{}; // share of the joint variance along PC1 and PC2
    double scale = 1.0;                // c: queries × c, keys ÷ c (then translated)
    // Pearson correlation between the 2-D distance of a query and a key and their dot product
    // after the scaling and translation (the logit up to a per-query constant) over every pair of
    // valid tokens (past 512 tokens, every pair of a regular subsample of at most 512 of them):
    // −1 when nearness in the picture is exactly attention.
    double distanceCorrelation = 0.0;

    float queryX(int t) const { return queries[std::size_t(2 * t)]; }
    float queryY(int t) const { return queries[std::size_t(2 * t + 1)]; }
    float keyX(int t) const { return keys[std::size_t(2 * t)]; }
    float keyY(int t) const { return keys[std::size_t(2 * t + 1)]; }
};

// One head of a layer: queries [T, heads·d], keys [T, kvHeads·d]; query head h reads kv head
// h / (heads / kvHeads) (grouped-query attention). `valid` [T] or empty (all valid). Throws
// std::invalid_argument on shapes that disagree.
QueryKeyEmbedding embedQueryKeyHead(const Tensor& queries, const Tensor& keys, int heads,
                                    int kvHeads, int head, const std::vector<uint8_t>& valid);

// What a token is, for colouring: a special token (it covers no text), punctuation or space,
// the first piece of a word, or a later piece of one.
enum class TokenKind : uint8_t { Special, Punctuation, WordStart, Continuation };
constexpr int kTokenKindCount = 4;
const char* tokenKindName(TokenKind kind); // "special", "punctuation", "word start", …

// Kinds from the code points of the text and each token's [begin, end) offsets into them (as a
// tokenizer's Encoding gives them; {0, 0} for a special token). A token whose first character
// follows a letter or digit, or which shares its start with the token before it (byte fallback),
// continues a word.
std::vector<TokenKind> classifyTokens(const std::u32string& text,
                                      const std::vector<std::pair<int, int>>& offsets);
} // namespace headlight::analysis
