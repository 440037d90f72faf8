#include "analysis/streamed_attention.h"

#include "analysis/divergence.h"

#include <Eigen/Dense>
#include <algorithm>
#include <omp.h>
#include <span>
#include <stdexcept>
#include <string>

namespace headlight::analysis {
namespace {

// Query rows per block: H · 64 · T floats per layer held at once by each thread.
// (Names of their own: a unity build may compile this file with attention_atlas.cpp.)
constexpr int64_t kStreamedRows = 64;

int64_t streamedBlocks(int64_t tokens) {
    return (tokens + kStreamedRows - 1) / kStreamedRows;
}

// The layers' common token count, after checking that every layer is one the atlas accepts,
// over the same tokens and heads, and the mask covers them.
int64_t checkedTokens(const std::vector<AtlasInput>& layers, const TokenMask& valid) {
    if (layers.empty()) throw std::invalid_argument("streamed attention statistics need a layer");
    const int64_t tokens = layers.front().queries.dim(0);
    for (const AtlasInput& layer : layers) {
        AttentionAtlas::checkInput(layer);
        if (layer.queries.dim(0) != tokens || layer.heads != layers.front().heads)
            throw std::invalid_argument("streamed attention statistics: every layer needs " +
                                        std::to_string(tokens) + " tokens and " +
                                        std::to_string(layers.front().heads) + " heads");
    }
    checkMask(valid, tokens);
    return tokens;
}

std::span<const float> rowOf(const RowMatrix& rows, int64_t r) {
    return {rows.data() + r * rows.cols(), std::size_t(rows.cols())};
}

// Every head's rows [q0, q1) of one layer.
std::vector<RowMatrix> headRows(const AtlasInput& layer, int64_t q0, int64_t q1) {
    std::vector<RowMatrix> rows;
    for (int h = 0; h < layer.heads; ++h)
        rows.push_back(AttentionAtlas::exactRows(layer, h, q0, q1));
    return rows;
}

// Rows [q0, q1) of rollout's Â_l (rollout.cpp): the heads' mean on valid keys plus the identity,
// each valid row renormalised to sum 1; padded rows are zero.
Eigen::MatrixXd residualRows(const AtlasInput& layer, const TokenMask& valid, int64_t q0,
                             int64_t q1) {
    const int64_t tokens = layer.queries.dim(0);
    Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(q1 - q0, tokens);
    for (const RowMatrix& head : headRows(layer, q0, q1))
        mean += head.cast<double>();
    mean /= double(layer.heads);
    for (int64_t k = 0; k < tokens; ++k)
        if (!valid[std::size_t(k)]) mean.col(k).setZero();
    for (int64_t r = 0; r < q1 - q0; ++r) {
        if (!valid[std::size_t(q0 + r)]) {
            mean.row(r).setZero();
            continue;
        }
        mean(r, q0 + r) += 1.0;
        const double sum = mean.row(r).sum();
        if (sum > 0.0) mean.row(r) /= sum;
    }
    return mean;
}

// Per block, the sums over its valid queries of the three per-row sparsity measures, [L · H] each.
struct SparsitySums {
    std::vector<double> top, share, keys;
};

// One block of rows through every layer: entropy and JSD written in place, sparsity summed.
void blockStatistics(const std::vector<AtlasInput>& layers, const TokenMask& valid,
                     const std::optional<SparsityOptions>& options, int64_t q0, int64_t q1,
                     StreamedStatistics& out, SparsitySums& sums) {
    const int64_t heads = layers.front().heads, tokens = layers.front().queries.dim(0);
    std::vector<RowMatrix> previous;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        std::vector<RowMatrix> current = headRows(layers[l], q0, q1);
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t r = 0; r < q1 - q0; ++r) {
                const int64_t query = q0 + r;
                if (!valid[std::size_t(query)]) continue;
                const std::span<const float> row = rowOf(current[std::size_t(h)], r);
                const auto at = std::size_t((int64_t(l) * heads + h) * tokens + query);
                out.entropy.data()[at] = float(rowEntropyNats(row, valid));
                if (l > 0)
                    out.adjacentJsd.data()[at - std::size_t(heads * tokens)] =
                        float(jensenShannonBits(rowOf(previous[std::size_t(h)], r), row, valid));
                if (!options) continue;
                const auto head = std::size_t(int64_t(l) * heads + h);
                sums.top[head] += topKMass(row, valid, options->topK);
                sums.share[head] += shareAboveThreshold(row, valid, options->threshold);
                sums.keys[head] += double(keysForMass(row, valid, options->massFraction));
            }
        previous = std::move(current);
    }
}
} // namespace

Tensor rebuiltMap(const AtlasInput& layer, int head) {
    AttentionAtlas::checkInput(layer);
    if (head != AttentionAtlas::kAllHeads && (head < 0 || head >= layer.heads))
        throw std::invalid_argument("head " + std::to_string(head) + " is outside 0.." +
                                    std::to_string(layer.heads - 1));
    const int64_t tokens = layer.queries.dim(0);
    Tensor map({tokens, tokens});
    const int64_t blocks = streamedBlocks(tokens);
#pragma omp parallel for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t q0 = b * kStreamedRows, q1 = std::min(tokens, q0 + kStreamedRows);
        if (head != AttentionAtlas::kAllHeads) {
            map.matrix().middleRows(q0, q1 - q0) = AttentionAtlas::exactRows(layer, head, q0, q1);
            continue;
        }
        RowMatrix sum = RowMatrix::Zero(q1 - q0, tokens);
        for (const RowMatrix& rows : headRows(layer, q0, q1))
            sum += rows;
        map.matrix().middleRows(q0, q1 - q0) = sum / float(layer.heads);
    }
    return map;
}

StreamedStatistics streamedStatistics(const std::vector<AtlasInput>& layers, const TokenMask& valid,
                                      const std::optional<SparsityOptions>& options) {
    const int64_t tokens = checkedTokens(layers, valid);
    const auto count = int64_t(layers.size());
    const int64_t heads = layers.front().heads;
    StreamedStatistics out{
        Tensor({count, heads, tokens}),
        Tensor({std::max<int64_t>(count - 1, 0), heads, tokens}),
        {Tensor({count, heads}), Tensor({count, heads}), Tensor({count, heads})}};
    const int64_t blocks = streamedBlocks(tokens);
    const std::vector<double> zeros(std::size_t(count * heads), 0.0);
    std::vector<SparsitySums> sums(std::size_t(blocks), SparsitySums{zeros, zeros, zeros});
#pragma omp parallel for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b)
        blockStatistics(layers, valid, options, b * kStreamedRows,
                        std::min(tokens, (b + 1) * kStreamedRows), out, sums[std::size_t(b)]);
    const std::vector<int64_t> queries = validPositions(valid);
    if (!options) out.sparsity = {};
    if (queries.empty() || !options) return out;
    const double perQuery = 1.0 / double(queries.size());
    for (std::size_t i = 0; i < zeros.size(); ++i) {
        double top = 0.0, share = 0.0, keys = 0.0;
        for (const SparsitySums& block : sums) {
            top += block.top[i];
            share += block.share[i];
            keys += block.keys[i];
        }
        out.sparsity.topKMass.data()[i] = float(top * perQuery);
        out.sparsity.shareAboveThreshold.data()[i] = float(share * perQuery);
        out.sparsity.keysForMass.data()[i] = float(keys * perQuery);
    }
    return out;
}

std::vector<float> streamedRolloutRow(const std::vector<AtlasInput>& layers, const TokenMask& valid,
                                      int64_t query) {
    const int64_t tokens = checkedTokens(layers, valid);
    if (query < 0 || query >= tokens)
        throw std::invalid_argument("rollout: query " + std::to_string(query) + " is outside 0.." +
                                    std::to_string(tokens - 1));
    Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(tokens);
    if (valid[std::size_t(query)]) r[query] = 1.0;
    const int64_t blocks = streamedBlocks(tokens);
    // Why from the top: row `query` of Â_L ⋯ Â_1 is e_query · Â_L first.
    for (auto l = int64_t(layers.size()) - 1; l >= 0; --l) {
        std::vector<Eigen::RowVectorXd> parts(std::size_t(omp_get_max_threads()),
                                              Eigen::RowVectorXd::Zero(tokens));
#pragma omp parallel for schedule(dynamic)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t q0 = b * kStreamedRows, q1 = std::min(tokens, q0 + kStreamedRows);
            // Rows the vector gives no weight add nothing (a causal text's rows after the query).
            if (r.segment(q0, q1 - q0).isZero(0.0)) continue;
            parts[std::size_t(omp_get_thread_num())] +=
                r.segment(q0, q1 - q0) * residualRows(layers[std::size_t(l)], valid, q0, q1);
        }
        r.setZero();
        for (const Eigen::RowVectorXd& part : parts)
            r += part;
    }
    std::vector<float> row(static_cast<std::size_t>(tokens));
    for (int64_t k = 0; k < tokens; ++k)
        row[std::size_t(k)] = float(r[k]);
    return row;
}

Tensor streamedRollout(const std::vector<AtlasInput>& layers, const TokenMask& valid) {
    const int64_t tokens = checkedTokens(layers, valid);
    if (tokens > kFullRolloutTokens)
        throw std::invalid_argument("the whole rollout of " + std::to_string(tokens) +
                                    " tokens is past " + std::to_string(kFullRolloutTokens) +
                                    "; ask for the selected query's row");
    Eigen::MatrixXd rollout = Eigen::MatrixXd::Zero(tokens, tokens);
    for (int64_t t = 0; t < tokens; ++t)
        rollout(t, t) = valid[std::size_t(t)] ? 1.0 : 0.0;
    const int64_t blocks = streamedBlocks(tokens);
    for (const AtlasInput& layer : layers) {
        Eigen::MatrixXd residual(tokens, tokens);
#pragma omp parallel for schedule(dynamic)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t q0 = b * kStreamedRows, q1 = std::min(tokens, q0 + kStreamedRows);
            residual.middleRows(q0, q1 - q0) = residualRows(layer, valid, q0, q1);
        }
        // Why left-multiply: layer l+1 reads layer l's outputs, so the product is Â_L ⋯ Â_1.
        rollout = residual * rollout;
    }
    Tensor result({tokens, tokens});
    result.matrix() = rollout.cast<float>();
    return result;
}
} // namespace headlight::analysis
