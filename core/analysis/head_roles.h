#pragma once
// Head roles scored automatically (docs/head-roles.md): how much of each head's attention falls
// where a previous-token, duplicate-token or induction head would put it, scored as
// TransformerLens's head detector does with its defaults (transformer_lens/head_detector.py:
// detect_head with error_measure "mul", exclude_bos and exclude_current_token false), plus the
// best fixed offset and the share of attention on the first token. Each probe sequence is scored
// on its own and the scores are averaged over the sequences.

#include "tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace headlight::analysis {

// Offsets 1..kMaxPositionalOffset are tried for the positional score.
constexpr int kMaxPositionalOffset = 8;

struct HeadRoleScores {
    double previousToken = 0.0;
    double duplicateToken = 0.0;
    double induction = 0.0;
    double positional = 0.0;  // mean weight at query i on key i - positionalOffset
    int positionalOffset = 0; // the offset (1..8, below the shortest probe) where that is largest
    double sink = 0.0;        // mean share of each query's weight on the first token
    std::optional<double>
        custom; // the user's pattern, scored as the three above; none if not given
};

// A 0/1 detection pattern [T, T], row-major (query, key).
using DetectionPattern = std::vector<uint8_t>;

// Key i - 1 for every query i > 0 (get_previous_token_head_detection_pattern).
DetectionPattern previousTokenPattern(int64_t tokens);
// Key j < i where ids[j] == ids[i] (get_duplicate_token_head_detection_pattern: equal ids, the
// diagonal cleared, lower triangle).
DetectionPattern duplicateTokenPattern(const std::vector<int32_t>& ids);
// The duplicate pattern moved one key to the right, key 0 cleared, lower triangle
// (get_induction_head_detection_pattern): key j where ids[j - 1] == ids[i], j - 1 < i.
DetectionPattern inductionPattern(const std::vector<int32_t>& ids);

// compute_head_attention_similarity_score with "mul": sum(map · pattern) / sum(map), over the
// whole [T, T] map (row-major), upper triangle included. NaN when the map sums to 0.
double patternScore(const float* map, const DetectionPattern& pattern, int64_t tokens);

// The sink score: the mean over the queries of A[i, 0] / Σ_j A[i, j], the share of each query's
// weight on the first token of a [T, T] map (row-major); a row summing to 0 counts 0.
double firstTokenShare(const float* map, int64_t tokens);
// firstTokenShare of every head of attentions [L, H, T, T], layer-major. Throws
// std::invalid_argument when the maps are not token by token.
std::vector<double> firstTokenShares(const Tensor& attentions);

// A pattern the user draws or loads [T, T], row-major, finite and lower triangular as detect_head
// asserts; values other than 0 and 1 weigh their cells ("mul" allows them, with a warning).
struct CustomPattern {
    int64_t tokens = 0;
    std::vector<float> weights;
};
// Σ map · pattern / Σ map, as patternScore.
double patternScore(const float* map, const CustomPattern& pattern);
// Throws std::invalid_argument naming the first cell that is not finite or lies above the
// diagonal, or a size that is not tokens².
void checkCustomPattern(const CustomPattern& pattern);

// What shapes a generated probe set (`headlight heads --seed --probes --length`); a scenario
// records it so that a scene scored on probes reopens with the same numbers.
struct GeneratedProbeSet {
    int seed = 0;    // SplitMix64's seed
    int count = 8;   // sequences
    int length = 20; // distinct random tokens, then repeated once: 2 × length tokens each
    bool operator==(const GeneratedProbeSet&) const = default;
};

// The generated probe set: `count` sequences, each `length` distinct ids drawn from [0, vocab)
// without `excluded` (the pad id; -1: none) and then repeated once, so that every token of the
// second half is a duplicate and its successor an induction target. The same arguments give the
// same ids on every platform (SplitMix64, no std distribution). Throws std::invalid_argument when
// the vocabulary has fewer than `length` usable ids.
std::vector<std::vector<int32_t>> repeatedRandomProbes(uint64_t seed, int count, int length,
                                                       int vocab, int excluded);

// Scores every head over probe sequences added one at a time.
class HeadRoleAccumulator {
public:
    // With a custom pattern every sequence must have its T tokens.
    HeadRoleAccumulator(int layers, int heads, CustomPattern custom = {});
    // One sequence: its ids [T] and its attention [L, H, T, T] (probabilities, rows summing to 1).
    // Throws std::invalid_argument when the shapes disagree, T < 2, or T is not the custom
    // pattern's size.
    void add(const std::vector<int32_t>& ids, const Tensor& attentions);
    int sequences() const { return sequences_; }
    // Layer-major, means over the sequences added; throws std::logic_error before any.
    std::vector<HeadRoleScores> scores() const;

private:
    int layers_, heads_;
    int sequences_ = 0;
    int64_t shortest_ = 0;
    // Per head: sums over sequences of each sequence's score.
    CustomPattern custom_;
    std::vector<double> previous_, duplicate_, induction_, sink_, customScores_;
    std::vector<double> offsets_; // [head, kMaxPositionalOffset]
};
} // namespace headlight::analysis
