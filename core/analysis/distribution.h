#pragma once
// Distributions of a per-token statistic (entropy [L, H, T], adjacent-layer JSD [L-1, H, T]) per
// head, for violin plots: the valid-token values of each head, their five-number summary, and a
// Gaussian kernel density estimate for the violin outline.

#include "analysis/attention_view.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <span>
#include <vector>

namespace headlight::analysis {

// Five-number summary plus count and mean; all 0 when count is 0.
// Quartiles interpolate linearly between order statistics (Hyndman & Fan type 7, NumPy's and R's
// default): quantile f sits at position f · (n - 1) of the sorted values.
struct Summary {
    std::size_t count = 0;
    float min = 0.0f;
    float q1 = 0.0f;
    float median = 0.0f;
    float q3 = 0.0f;
    float max = 0.0f;
    float mean = 0.0f;
};

// One value list per head, layer-major: values[layer · heads + head].
struct HeadValues {
    int64_t layers = 0;
    int64_t heads = 0;
    std::vector<std::vector<float>> values;

    std::vector<float>& at(int64_t layer, int64_t head) {
        return values[std::size_t(layer * heads + head)];
    }
    const std::vector<float>& at(int64_t layer, int64_t head) const {
        return values[std::size_t(layer * heads + head)];
    }
};

// One head's violin: its summary and the density evaluated on the caller's grid.
struct Violin {
    int64_t layer = 0;
    int64_t head = 0;
    Summary summary;
    std::vector<float> density; // [G], same length as the grid
};

// [S] sorted ascending values, f in [0, 1] -> the type-7 quantile; 0 for an empty list.
double quantileSorted(std::span<const float> sorted, double fraction);

// [N] values in any order -> summary.
Summary summarise(std::span<const float> values);

// [N] values -> Silverman's rule-of-thumb bandwidth, h = 0.9 · min(σ, IQR / 1.34) · N^(-1/5), σ the
// sample standard deviation. When that spread is 0 the fallbacks of R's bw.nrd0 apply: σ, else
// |first value|, else 1; so h > 0 whenever N > 0 (and 0 for no values).
double silvermanBandwidth(std::span<const float> values);

// [N] values, [G] grid, h > 0 -> [G] Gaussian KDE: (1 / (N h)) Σ_i φ((x - v_i) / h). All zeros for
// no values. Throws std::invalid_argument for h ≤ 0 with values present.
std::vector<float> gaussianKde(std::span<const float> values, std::span<const float> grid,
                               double bandwidth);

// [N] values, [G] grid -> [G] Gaussian KDE with Silverman's bandwidth.
std::vector<float> gaussianKde(std::span<const float> values, std::span<const float> grid);

// low, high, G ≥ 2 -> [G] evenly spaced points from low to high inclusive (G = 1 gives [low]).
std::vector<float> linearGrid(float low, float high, int64_t points);

// [N, H, T] per-token statistic, [T] mask -> the valid-token values of each of the N · H heads.
HeadValues collectHeadValues(const Tensor& perToken, const TokenMask& valid);

// per-head values, [G] grid -> one violin per head, layer-major.
std::vector<Violin> headViolins(const HeadValues& values, std::span<const float> grid);

// violins -> for each layer, its head indices ordered by median (ascending unless `descending`),
// ties by head index; the RealFormer figures sort heads this way within each layer.
std::vector<std::vector<int64_t>> headOrderByMedian(const std::vector<Violin>& violins,
                                                    bool descending = false);
} // namespace headlight::analysis
