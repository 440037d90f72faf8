#include "analysis/sparse_autoencoder.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace headlight::analysis {
namespace {

using SaeMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SaeRow = Eigen::Matrix<float, 1, Eigen::Dynamic>;

Eigen::Map<const SaeMatrix> saeMatrixOf(const Tensor& t, int64_t rows, int64_t cols) {
    return {t.data(), Eigen::Index(rows), Eigen::Index(cols)};
}

Eigen::Map<const SaeRow> saeRowOf(const Tensor& t) {
    return {t.data(), Eigen::Index(t.size())};
}

// How each row was normalised, to undo it after decoding (SAELens's run_time_activation_norm_fn_in
// and _out).
struct SaeRowScale {
    std::vector<float> scale; // x · scale on the way in, / scale on the way out
    std::vector<float> mean;  // layer_norm's mean, added back after
    std::vector<float> std;   // layer_norm's standard deviation (without eps), multiplied back
};

SaeRowScale normalizeRows(const SparseAutoencoder& sae, SaeMatrix& x) {
    SaeRowScale s;
    const Eigen::Index rows = x.rows();
    switch (sae.normalization) {
    case SaeNormalization::None:
        break;
    case SaeNormalization::ExpectedAverageOnlyIn:
        if (sae.scalingFactor) {
            s.scale.assign(std::size_t(rows), float(*sae.scalingFactor));
            x *= float(*sae.scalingFactor);
        }
        break;
    case SaeNormalization::ConstantNormRescale:
        s.scale.resize(std::size_t(rows));
        for (Eigen::Index r = 0; r < rows; ++r) {
            const float coefficient = std::sqrt(float(sae.dIn)) / x.row(r).norm();
            s.scale[std::size_t(r)] = coefficient;
            x.row(r) *= coefficient;
        }
        break;
    case SaeNormalization::LayerNorm:
        s.mean.resize(std::size_t(rows));
        s.std.resize(std::size_t(rows));
        for (Eigen::Index r = 0; r < rows; ++r) {
            const float mu = x.row(r).mean();
            x.row(r).array() -= mu;
            // torch.Tensor.std: the unbiased estimate (divides by n - 1)
            const float sigma = std::sqrt(x.row(r).squaredNorm() / float(sae.dIn - 1));
            x.row(r) /= sigma + 1e-5f;
            s.mean[std::size_t(r)] = mu;
            s.std[std::size_t(r)] = sigma;
        }
        break;
    }
    return s;
}

void denormalizeRows(const SaeRowScale& s, SaeMatrix& y) {
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        if (!s.scale.empty()) y.row(r) /= s.scale[std::size_t(r)];
        if (!s.std.empty())
            y.row(r) = (y.row(r) * s.std[std::size_t(r)]).array() + s.mean[std::size_t(r)];
    }
}

// Keeps the k largest entries of each row, through ReLU; zeroes the rest (torch.topk, then relu).
void keepTopK(SaeMatrix& p, int k) {
    std::vector<int> order(std::size_t(p.cols()));
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        std::iota(order.begin(), order.end(), 0);
        auto row = p.row(r);
        std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                         [&](int a, int b) { return row(a) > row(b); });
        std::vector<char> kept(order.size(), 0);
        for (int i = 0; i < k; ++i)
            kept[std::size_t(order[std::size_t(i)])] = 1;
        for (Eigen::Index c = 0; c < p.cols(); ++c)
            row(c) = kept[std::size_t(c)] ? std::max(row(c), 0.0f) : 0.0f;
    }
}
// x̂ = denormalise(f·W_dec + b_dec), f / ‖W_dec row‖ first with the topk rescale.
// The reconstruction of features `f`; `activations` are the SAE's input as given, which a
// transcoder's affine skip adds back (x̂ += x·W_skip).
Tensor decodeRows(const SparseAutoencoder& sae, const SaeMatrix& f, const SaeRowScale& scale,
                  const Tensor& activations) {
    const auto wDec = saeMatrixOf(sae.wDec, sae.dSae, sae.dIn);
    SaeMatrix y;
    if (sae.architecture == SaeArchitecture::TopK && sae.rescaleByDecoderNorm)
        y = (f.array().rowwise() / wDec.rowwise().norm().transpose().array()).matrix() * wDec;
    else
        y = f * wDec;
    y.rowwise() += saeRowOf(sae.bDec);
    denormalizeRows(scale, y);
    if (!sae.wSkip.empty())
        y += saeMatrixOf(activations, y.rows(), sae.dIn) * saeMatrixOf(sae.wSkip, sae.dIn, sae.dIn);
    return Tensor({int64_t(y.rows()), int64_t(sae.dIn)},
                  std::vector<float>(y.data(), y.data() + y.size()));
}
} // namespace

const char* saeArchitectureName(SaeArchitecture architecture) {
    switch (architecture) {
    case SaeArchitecture::Standard:
        return "standard";
    case SaeArchitecture::JumpRelu:
        return "jumprelu";
    case SaeArchitecture::TopK:
        return "topk";
    case SaeArchitecture::Gated:
        return "gated";
    }
    return "?";
}

const char* saeNormalizationName(SaeNormalization normalization) {
    switch (normalization) {
    case SaeNormalization::None:
        return "none";
    case SaeNormalization::ConstantNormRescale:
        return "constant_norm_rescale";
    case SaeNormalization::LayerNorm:
        return "layer_norm";
    case SaeNormalization::ExpectedAverageOnlyIn:
        return "expected_average_only_in";
    }
    return "?";
}

SaeEncoding encodeAndDecode(const SparseAutoencoder& sae, const Tensor& activations) {
    if (activations.rank() != 2 || activations.dim(1) != sae.dIn)
        throw std::invalid_argument("the SAE reads rows of width " + std::to_string(sae.dIn) +
                                    ", not " + activations.shapeString());
    const int64_t rows = activations.dim(0);
    SaeMatrix x = saeMatrixOf(activations, rows, sae.dIn);
    const SaeRowScale scale = normalizeRows(sae, x);
    if (sae.applyBDecToInput) x.rowwise() -= saeRowOf(sae.bDec);
    const auto wEnc = saeMatrixOf(sae.wEnc, sae.dIn, sae.dSae);
    const auto wDec = saeMatrixOf(sae.wDec, sae.dSae, sae.dIn);

    SaeMatrix f;
    SaeRow decoderNorms;
    switch (sae.architecture) {
    case SaeArchitecture::Standard:
        f = ((x * wEnc).rowwise() + saeRowOf(sae.bEnc)).cwiseMax(0.0f);
        break;
    case SaeArchitecture::JumpRelu: {
        f = (x * wEnc).rowwise() + saeRowOf(sae.bEnc);
        const auto threshold = saeRowOf(sae.threshold);
        for (Eigen::Index r = 0; r < f.rows(); ++r)
            for (Eigen::Index c = 0; c < f.cols(); ++c)
                f(r, c) = f(r, c) > threshold(c) ? std::max(f(r, c), 0.0f) : 0.0f;
        break;
    }
    case SaeArchitecture::TopK:
        f = (x * wEnc).rowwise() + saeRowOf(sae.bEnc);
        if (sae.rescaleByDecoderNorm) {
            decoderNorms = wDec.rowwise().norm().transpose();
            f.array().rowwise() *= decoderNorms.array();
        }
        keepTopK(f, sae.k);
        break;
    case SaeArchitecture::Gated: {
        const SaeMatrix gate = (x * wEnc).rowwise() + saeRowOf(sae.bGate);
        const SaeRow magnitudeScale = saeRowOf(sae.rMag).array().exp();
        const SaeMatrix wMag = wEnc.array().rowwise() * magnitudeScale.array();
        f = ((x * wMag).rowwise() + saeRowOf(sae.bMag)).cwiseMax(0.0f);
        f.array() *= (gate.array() > 0.0f).cast<float>();
        break;
    }
    }

    SaeEncoding encoding;
    encoding.input = activations;
    encoding.features =
        Tensor({rows, int64_t(sae.dSae)}, std::vector<float>(f.data(), f.data() + f.size()));
    encoding.output = decodeRows(sae, f, scale, activations);
    return encoding;
}

Tensor decodeFeatures(const SparseAutoencoder& sae, const SaeEncoding& encoding,
                      const Tensor& features) {
    const int64_t rows = encoding.input.dim(0);
    if (features.rank() != 2 || features.dim(0) != rows || features.dim(1) != sae.dSae)
        throw std::invalid_argument("the SAE decodes [" + std::to_string(rows) + ", " +
                                    std::to_string(sae.dSae) + "] features, not " +
                                    features.shapeString());
    // Why again: the same rows give the same normalisation the encoding applied.
    SaeMatrix x = saeMatrixOf(encoding.input, rows, sae.dIn);
    const SaeRowScale scale = normalizeRows(sae, x);
    return decodeRows(sae, saeMatrixOf(features, rows, sae.dSae), scale, encoding.input);
}

ReconstructionQuality reconstructionQuality(const SaeEncoding& encoding) {
    ReconstructionQuality quality;
    const int64_t rows = encoding.input.dim(0), cols = encoding.input.dim(1);
    const auto x =
        saeMatrixOf(encoding.target.empty() ? encoding.input : encoding.target, rows, cols);
    const auto y = saeMatrixOf(encoding.output, rows, cols);
    const Eigen::MatrixXd xd = x.cast<double>(), yd = y.cast<double>();
    const double residual = (xd - yd).squaredNorm();
    const Eigen::RowVectorXd mean = xd.colwise().mean();
    const double total = (xd.rowwise() - mean).squaredNorm();
    quality.varianceExplained =
        rows > 1 ? 1.0 - residual / total : std::numeric_limits<double>::quiet_NaN();
    quality.meanSquaredError = residual / double(rows * cols);
    const auto f = saeMatrixOf(encoding.features, rows, encoding.features.dim(1));
    quality.meanL0 = double((f.array() != 0.0f).count()) / double(rows);
    return quality;
}
} // namespace headlight::analysis
