#include "analysis/rollout.h"

#include <Eigen/Dense>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// [T] mask -> [T] indicator: 1 for valid tokens, 0 for padding.
Eigen::VectorXd validIndicator(const TokenMask& valid) {
    Eigen::VectorXd indicator(static_cast<Eigen::Index>(valid.size()));
    for (std::size_t t = 0; t < valid.size(); ++t)
        indicator[Eigen::Index(t)] = valid[t] ? 1.0 : 0.0;
    return indicator;
}

// [T] mask -> [T, T] the identity on valid tokens (0 on padded diagonal entries).
Eigen::MatrixXd validIdentity(const TokenMask& valid) {
    return validIndicator(valid).asDiagonal();
}

// [H, T, T] of one layer -> [T, T] mean over heads, padded rows and columns zeroed.
Eigen::MatrixXd meanHeadsOnValid(const AttentionView& view, int64_t layer, const TokenMask& valid) {
    const Eigen::Index tokens = view.tokens;
    Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(tokens, tokens);
    for (int64_t h = 0; h < view.heads; ++h) {
        const float* block = view.row(layer, h, 0).data();
        mean += ConstMatrixMap(block, tokens, tokens).cast<double>();
    }
    if (view.heads > 0) mean /= double(view.heads);
    const Eigen::VectorXd keep = validIndicator(valid);
    return keep.asDiagonal() * mean * keep.asDiagonal();
}

// [H, T, T] of one layer -> [T, T] Â_l = rows of (mean_h A_l + I) renormalised to sum 1; for
// rows that summed to 1 over valid keys this is exactly 0.5 · mean + 0.5 · I.
Eigen::MatrixXd residualAttention(const AttentionView& view, int64_t layer,
                                  const TokenMask& valid) {
    Eigen::MatrixXd withResidual = meanHeadsOnValid(view, layer, valid) + validIdentity(valid);
    const Eigen::VectorXd rowSums = withResidual.rowwise().sum();
    for (Eigen::Index i = 0; i < withResidual.rows(); ++i)
        if (rowSums[i] > 0.0) withResidual.row(i) /= rowSums[i];
    return withResidual;
}
} // namespace

Tensor attentionRollout(const Tensor& attention, const TokenMask& valid) {
    // [L, H, T, T] -> [T, T]
    if (attention.rank() != 4)
        throw std::invalid_argument("attention rollout needs [L, H, T, T], got " +
                                    attention.shapeString());
    const AttentionView view = viewAttention(attention, valid);
    Eigen::MatrixXd rollout = validIdentity(valid);
    // Why left-multiply: layer l+1 reads layer l's outputs, so the product is Â_L ⋯ Â_1.
    for (int64_t l = 0; l < view.layers; ++l)
        rollout = residualAttention(view, l, valid) * rollout;
    Tensor result({view.tokens, view.tokens});
    result.matrix() = rollout.cast<float>();
    return result;
}
} // namespace headlight::analysis
