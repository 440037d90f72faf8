#include "analysis/distribution.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// [N] values -> their sample standard deviation (N - 1 denominator); 0 for fewer than 2.
double sampleStandardDeviation(std::span<const float> values) {
    if (values.size() < 2) return 0.0;
    double mean = 0.0;
    for (float v : values)
        mean += v;
    mean /= double(values.size());
    double squares = 0.0;
    for (float v : values)
        squares += (v - mean) * (v - mean);
    return std::sqrt(squares / double(values.size() - 1));
}

// [N] values -> a sorted copy.
std::vector<float> sortedCopy(std::span<const float> values) {
    std::vector<float> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

// [N] values -> Silverman's spread min(σ, IQR / 1.34) with bw.nrd0's fallbacks for a zero spread.
double silvermanSpread(std::span<const float> values) {
    const std::vector<float> sorted = sortedCopy(values);
    const double deviation = sampleStandardDeviation(values);
    const double iqr = quantileSorted(sorted, 0.75) - quantileSorted(sorted, 0.25);
    double spread = std::min(deviation, iqr / 1.34);
    if (spread <= 0.0) spread = deviation;
    if (spread <= 0.0) spread = std::abs(double(values.front()));
    if (spread <= 0.0) spread = 1.0;
    return spread;
}

// Past this z², exp(-z² / 2) is below half the smallest double: it rounds to exactly 0.
constexpr double kZeroKernelSquare = 1491.0;

// x, [N] values, h -> the KDE at x.
double kdeAt(double x, std::span<const float> values, double bandwidth) {
    const double norm =
        1.0 / (double(values.size()) * bandwidth * std::sqrt(2.0 * std::numbers::pi));
    double sum = 0.0;
    for (float v : values) {
        const double z = (x - v) / bandwidth;
        // Why skip: the term adds exactly 0, and exp's underflow path is slow (most terms of a
        // peaked head's density take it).
        if (z * z > kZeroKernelSquare) continue;
        sum += std::exp(-0.5 * z * z);
    }
    return sum * norm;
}

void checkPerTokenShape(const Tensor& perToken, const TokenMask& valid) {
    // [N, H, T], [T] -> ()
    if (perToken.rank() != 3)
        throw std::invalid_argument("per-token statistic must be [N, H, T], got " +
                                    perToken.shapeString());
    checkMask(valid, perToken.dim(2));
}
} // namespace

double quantileSorted(std::span<const float> sorted, double fraction) {
    // [S] -> scalar
    if (sorted.empty()) return 0.0;
    const double position = std::clamp(fraction, 0.0, 1.0) * double(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    const double weight = position - double(below);
    return double(sorted[below]) + weight * (double(sorted[above]) - double(sorted[below]));
}

Summary summarise(std::span<const float> values) {
    // [N] -> summary
    Summary summary;
    if (values.empty()) return summary;
    const std::vector<float> sorted = sortedCopy(values);
    summary.count = sorted.size();
    summary.min = sorted.front();
    summary.max = sorted.back();
    summary.q1 = float(quantileSorted(sorted, 0.25));
    summary.median = float(quantileSorted(sorted, 0.5));
    summary.q3 = float(quantileSorted(sorted, 0.75));
    summary.mean =
        float(std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size()));
    return summary;
}

double silvermanBandwidth(std::span<const float> values) {
    // [N] -> scalar
    if (values.empty()) return 0.0;
    return 0.9 * silvermanSpread(values) * std::pow(double(values.size()), -0.2);
}

std::vector<float> gaussianKde(std::span<const float> values, std::span<const float> grid,
                               double bandwidth) {
    // [N], [G] -> [G]
    std::vector<float> density(grid.size(), 0.0f);
    if (values.empty()) return density;
    if (!(bandwidth > 0.0)) throw std::invalid_argument("KDE bandwidth must be positive");
    for (std::size_t g = 0; g < grid.size(); ++g)
        density[g] = float(kdeAt(grid[g], values, bandwidth));
    return density;
}

std::vector<float> gaussianKde(std::span<const float> values, std::span<const float> grid) {
    // [N], [G] -> [G]
    return gaussianKde(values, grid, silvermanBandwidth(values));
}

std::vector<float> linearGrid(float low, float high, int64_t points) {
    // -> [G]
    std::vector<float> grid;
    if (points <= 0) return grid;
    if (points == 1) return {low};
    const double step = (double(high) - double(low)) / double(points - 1);
    for (int64_t i = 0; i < points; ++i)
        grid.push_back(float(double(low) + step * double(i)));
    grid.back() = high;
    return grid;
}

HeadValues collectHeadValues(const Tensor& perToken, const TokenMask& valid) {
    // [N, H, T], [T] -> N · H lists of ≤ T values
    checkPerTokenShape(perToken, valid);
    HeadValues collected{perToken.dim(0), perToken.dim(1), {}};
    const int64_t tokens = perToken.dim(2);
    collected.values.resize(std::size_t(collected.layers * collected.heads));
    const float* data = perToken.data();
    for (std::size_t head = 0; head < collected.values.size(); ++head)
        for (int64_t t = 0; t < tokens; ++t)
            if (valid[std::size_t(t)])
                collected.values[head].push_back(data[int64_t(head) * tokens + t]);
    return collected;
}

std::vector<Violin> headViolins(const HeadValues& values, std::span<const float> grid) {
    // L · H lists, [G] -> L · H violins
    std::vector<Violin> violins;
    for (int64_t l = 0; l < values.layers; ++l)
        for (int64_t h = 0; h < values.heads; ++h) {
            const std::vector<float>& list = values.at(l, h);
            violins.push_back({l, h, summarise(list), gaussianKde(list, grid)});
        }
    return violins;
}

std::vector<std::vector<int64_t>> headOrderByMedian(const std::vector<Violin>& violins,
                                                    bool descending) {
    // violins -> [L][H] head indices
    std::vector<std::vector<const Violin*>> byLayer;
    for (const Violin& violin : violins) {
        if (violin.layer >= int64_t(byLayer.size())) byLayer.resize(std::size_t(violin.layer + 1));
        byLayer[std::size_t(violin.layer)].push_back(&violin);
    }
    std::vector<std::vector<int64_t>> order;
    for (auto& layer : byLayer) {
        std::sort(layer.begin(), layer.end(), [descending](const Violin* a, const Violin* b) {
            if (a->summary.median != b->summary.median)
                return descending ? a->summary.median > b->summary.median
                                  : a->summary.median < b->summary.median;
            return a->head < b->head;
        });
        std::vector<int64_t> heads;
        for (const Violin* violin : layer)
            heads.push_back(violin->head);
        order.push_back(std::move(heads));
    }
    return order;
}
} // namespace headlight::analysis
