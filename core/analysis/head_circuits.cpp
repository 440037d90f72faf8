#include "analysis/head_circuits.h"

#include "io/stored_matrix.h"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <cmath>
#include <complex>
#include <stdexcept>

namespace headlight::analysis {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// An nn.Linear weight [out, in] as a float matrix, widened from its file when left mapped.
Eigen::MatrixXf linearWeight(const HostLinear& linear, const char* what, int layer) {
    if (!linear.weight.empty()) {
        if (linear.weight.rank() != 2)
            throw std::invalid_argument("layer " + std::to_string(layer) + "'s " + what +
                                        " is not a matrix");
        return Eigen::Map<const RowMajor>(linear.weight.data(), linear.weight.dim(0),
                                          linear.weight.dim(1));
    }
    if (!linear.stored.valid())
        throw std::invalid_argument("layer " + std::to_string(layer) + " has no " + what +
                                    " map: its heads have no circuit scores");
    RowMajor rows(linear.stored.rows, linear.stored.cols);
    io::widenRows(linear.stored, 0, linear.stored.rows, rows.data());
    return rows;
}

// The pre-norm gain as a column scale on [D, n] reading weights; 1 where the block has none.
Eigen::VectorXf readingGain(const HostNorm& norm, int hidden) {
    if (norm.gamma.size() != std::size_t(hidden)) return Eigen::VectorXf::Ones(hidden);
    return Eigen::Map<const Eigen::VectorXf>(norm.gamma.data(), hidden);
}

struct Processing {
    bool foldNorms = false; // pre-norm: fold_ln
    bool center = false;    // and LayerNorm: center reading and writing weights
};

Processing processingFor(const ModelSpec& spec) {
    bool preNorm = spec.preNorm;
    bool layerNorm = spec.norm == NormKind::LayerNorm;
    if (spec.zoo.block) {
        preNorm = spec.zoo.block->placement == variants::BlockSpec::Placement::Pre;
        layerNorm = spec.zoo.block->norm == variants::BlockSpec::Norm::Layer;
    }
    return {preNorm, preNorm && layerNorm};
}

// W [D, n] reading the residual stream: the norm's gain folded in, then centred over D.
Eigen::MatrixXf readingWeights(const HostLinear& linear, const HostNorm& norm, int layer,
                               const char* what, const ModelSpec& spec, Processing processing) {
    Eigen::MatrixXf weights = linearWeight(linear, what, layer).transpose();
    if (weights.rows() != spec.hidden)
        throw std::invalid_argument("layer " + std::to_string(layer) + "'s " + what +
                                    " does not read the hidden size");
    if (processing.foldNorms) weights = readingGain(norm, spec.hidden).asDiagonal() * weights;
    if (processing.center) weights.rowwise() -= weights.colwise().mean();
    return weights;
}

// Streams W_U W_E over the vocabulary, one block of rows at a time.
class UnembedTimesEmbed {
public:
    UnembedTimesEmbed(const HostWeights& weights, const ModelSpec& spec, Processing processing)
        : weights_(weights)
        , spec_(spec)
        , processing_(processing) {}

    Eigen::MatrixXd sum(std::string& absence) const {
        const HostLmHead& head = weights_.lmHead;
        if (head.kind == HostLmHead::Kind::None) {
            absence = "the checkpoint has no LM head (" + head.absence + ")";
            return {};
        }
        if (head.kind == HostLmHead::Kind::MaskedLm) {
            absence = "its masked-LM head (dense, activation, norm) is not a linear unembedding";
            return {};
        }
        const int hidden = spec_.hidden;
        const int64_t vocab = spec_.vocabSize;
        Eigen::MatrixXd product = Eigen::MatrixXd::Zero(hidden, hidden);
        Eigen::VectorXd unembedSum = Eigen::VectorXd::Zero(hidden);
        Eigen::VectorXd embedSum = Eigen::VectorXd::Zero(hidden);
        Eigen::VectorXf gain = Eigen::VectorXf::Ones(hidden);
        if (processing_.foldNorms) gain = readingGain(weights_.finalNorm, hidden);
        constexpr int64_t kBlock = 1024;
        for (int64_t first = 0; first < vocab; first += kBlock) {
            const int64_t count = std::min(kBlock, vocab - first);
            // Each block's product in f32 (the GEMM that dominates), summed in f64.
            Eigen::MatrixXf embed = tokenRows(true, first, count);
            if (processing_.center) embed.colwise() -= embed.rowwise().mean();
            Eigen::MatrixXf unembed = head.kind == HostLmHead::Kind::Tied
                                          ? tokenRows(true, first, count)
                                          : tokenRows(false, first, count);
            unembed = unembed * gain.asDiagonal();
            if (processing_.center) unembed.colwise() -= unembed.rowwise().mean();
            product += (unembed.transpose() * embed).cast<double>();
            unembedSum += unembed.cast<double>().colwise().sum().transpose();
            embedSum += embed.cast<double>().colwise().sum().transpose();
        }
        // center_unembed: W_U minus its mean over the vocabulary, so Σ_v (u_v − ū) e_vᵀ.
        product -= unembedSum * embedSum.transpose() / double(vocab);
        return product;
    }

private:
    // Rows [first, first + count) of the token embedding or the untied LM head, [count, D].
    Eigen::MatrixXf tokenRows(bool embedding, int64_t first, int64_t count) const {
        const Tensor& dense = embedding ? weights_.tokenEmbedding : weights_.lmHead.weight;
        const io::StoredMatrix& stored =
            embedding ? weights_.tokenEmbeddingStored : weights_.lmHead.stored;
        const int hidden = spec_.hidden;
        RowMajor rows(count, hidden);
        if (!dense.empty())
            rows = Eigen::Map<const RowMajor>(dense.data() + first * hidden, count, hidden);
        else
            io::widenRows(stored, first, count, rows.data());
        return rows;
    }

    const HostWeights& weights_;
    const ModelSpec& spec_;
    Processing processing_;
};

// R of a thin QR: tall = Q·R with Q's columns orthonormal, so ||Q·M||_F = ||M||_F.
Eigen::MatrixXd triangularFactor(const Eigen::MatrixXd& tall) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(tall);
    const auto columns = tall.cols();
    return qr.matrixQR().topRows(columns).triangularView<Eigen::Upper>();
}

// One side of a composition: per head the factors A [D, dh] and B [dh, D] of the d × d matrix.
struct Factored {
    std::vector<Eigen::MatrixXd> left, right; // A, Bᵀ per head
};

Eigen::MatrixXd headColumns(const Eigen::MatrixXf& weights, int head, int headDim) {
    return weights.middleCols(Eigen::Index(head) * headDim, headDim).cast<double>();
}

int kvHeadOf(const HeadCircuits& c, int head) {
    return head / (c.heads / c.kvHeads);
}

Factored factorsOf(const HeadCircuits& c, int layer, bool ov, bool transposeQk) {
    Factored factored;
    for (int h = 0; h < c.heads; ++h) {
        const int kv = kvHeadOf(c, h);
        if (ov) {
            factored.left.push_back(headColumns(c.value[std::size_t(layer)], kv, c.headDim));
            factored.right.push_back(c.output[std::size_t(layer)]
                                         .middleRows(Eigen::Index(h) * c.headDim, c.headDim)
                                         .transpose()
                                         .cast<double>());
        } else {
            Eigen::MatrixXd q = headColumns(c.query[std::size_t(layer)], h, c.headDim);
            Eigen::MatrixXd k = headColumns(c.key[std::size_t(layer)], kv, c.headDim);
            factored.left.push_back(transposeQk ? k : q);
            factored.right.push_back(transposeQk ? q : k);
        }
    }
    return factored;
}

// A factored d × d matrix A·B (A [D, dh], B [dh, D]) with A = Q_A R_A and Bᵀ = Q_B R_B has
// ||A·B||_F = ||R_A·B||_F = ||A·R_Bᵀ||_F, and for two of them ||A1 B1 A2 B2||_F =
// ||(R_A1 B1)(A2 R_B2ᵀ)||_F: each head reduces to X = R_A·B [dh, D] on the left of a product
// and Y = A·R_Bᵀ [D, dh] on the right, and a layer pair's head pairs are one GEMM.
struct ReducedSide {
    Eigen::MatrixXf
        stacked; // left: the heads' X stacked [H·dh, D]; right: Y side by side [D, H·dh]
    std::vector<double> norms; // per head ||A·B||_F
};

// Each head's W_OV = W_V W_O as the left factor of a composition.
ReducedSide reducedLeft(const HeadCircuits& c, int layer) {
    const Factored ov = factorsOf(c, layer, true, false);
    ReducedSide side{Eigen::MatrixXf(Eigen::Index(c.heads) * c.headDim, c.hidden), {}};
    for (int h = 0; h < c.heads; ++h) {
        const Eigen::MatrixXd x =
            triangularFactor(ov.left[std::size_t(h)]) * ov.right[std::size_t(h)].transpose();
        side.stacked.middleRows(Eigen::Index(h) * c.headDim, c.headDim) = x.cast<float>();
        side.norms.push_back(x.norm());
    }
    return side;
}

// Each head's W_QK (Q), W_QKᵀ (K) or W_OV (V) as the right factor of a composition.
ReducedSide reducedRight(const HeadCircuits& c, int layer, CompositionKind kind) {
    const Factored factored = kind == CompositionKind::Value
                                  ? factorsOf(c, layer, true, false)
                                  : factorsOf(c, layer, false, kind == CompositionKind::Key);
    ReducedSide side{Eigen::MatrixXf(c.hidden, Eigen::Index(c.heads) * c.headDim), {}};
    for (int h = 0; h < c.heads; ++h) {
        const Eigen::MatrixXd y = factored.left[std::size_t(h)] *
                                  triangularFactor(factored.right[std::size_t(h)]).transpose();
        side.stacked.middleCols(Eigen::Index(h) * c.headDim, c.headDim) = y.cast<float>();
        side.norms.push_back(y.norm());
    }
    return side;
}
} // namespace

HeadCircuits readHeadCircuits(const HostWeights& weights, const ModelSpec& spec) {
    HeadCircuits c;
    c.layers = int(weights.layers.size());
    c.heads = spec.heads;
    c.kvHeads = spec.kvHeads > 0 ? spec.kvHeads : spec.heads;
    c.headDim = spec.headDim;
    c.hidden = spec.hidden;
    const Processing processing = processingFor(spec);
    for (int l = 0; l < c.layers; ++l) {
        const HostLayer& layer = weights.layers[std::size_t(l)];
        const HostNorm& norm = layer.attentionNorm;
        c.query.push_back(readingWeights(layer.query, norm, l, "query", spec, processing));
        c.key.push_back(readingWeights(layer.key, norm, l, "key", spec, processing));
        c.value.push_back(readingWeights(layer.value, norm, l, "value", spec, processing));
        Eigen::MatrixXf output = linearWeight(layer.output, "output", l).transpose();
        if (processing.center) output.colwise() -= output.rowwise().mean();
        c.output.push_back(std::move(output));
        if (c.query.back().cols() != Eigen::Index(c.heads) * c.headDim ||
            c.key.back().cols() != Eigen::Index(c.kvHeads) * c.headDim ||
            c.value.back().cols() != Eigen::Index(c.kvHeads) * c.headDim ||
            c.output.back().rows() != Eigen::Index(c.heads) * c.headDim ||
            c.output.back().cols() != spec.hidden)
            throw std::invalid_argument(
                "layer " + std::to_string(l) + "'s attention maps do not split into " +
                std::to_string(c.heads) + " heads of " + std::to_string(c.headDim));
    }
    c.unembedTimesEmbed = UnembedTimesEmbed(weights, spec, processing).sum(c.copyingAbsence);
    return c;
}

std::vector<double> compositionScores(const HeadCircuits& c, CompositionKind kind,
                                      const std::function<void(int, int)>& progress) {
    const auto total = std::size_t(c.layers) * std::size_t(c.heads);
    std::vector<double> scores(total * total, 0.0);
    std::vector<ReducedSide> left, right;
    for (int l = 0; l < c.layers; ++l) {
        left.push_back(reducedLeft(c, l));
        right.push_back(reducedRight(c, l, kind));
    }
    const int pairs = c.layers * (c.layers - 1) / 2;
    int done = 0;
    for (int l1 = 0; l1 < c.layers; ++l1)
        for (int l2 = l1 + 1; l2 < c.layers; ++l2) {
            // Every head pair's X_a · Y_b at once: [H·dh, H·dh], one dh × dh block per pair.
            const Eigen::MatrixXf products =
                left[std::size_t(l1)].stacked * right[std::size_t(l2)].stacked;
            for (int h1 = 0; h1 < c.heads; ++h1)
                for (int h2 = 0; h2 < c.heads; ++h2) {
                    const double product =
                        products
                            .block(Eigen::Index(h1) * c.headDim, Eigen::Index(h2) * c.headDim,
                                   c.headDim, c.headDim)
                            .cast<double>()
                            .norm();
                    scores[(std::size_t(l1) * c.heads + h1) * total + std::size_t(l2) * c.heads +
                           h2] = product / (left[std::size_t(l1)].norms[std::size_t(h1)] *
                                            right[std::size_t(l2)].norms[std::size_t(h2)]);
                }
            if (progress) progress(++done, pairs);
        }
    return scores;
}

std::vector<double> copyingScores(const HeadCircuits& c) {
    if (c.unembedTimesEmbed.size() == 0) return {};
    std::vector<double> scores;
    const Eigen::MatrixXf unembedTimesEmbed = c.unembedTimesEmbed.cast<float>();
    for (int l = 0; l < c.layers; ++l) {
        // Every head's W_O (W_U W_E) at once: [H·dh, D].
        const Eigen::MatrixXf outputThroughVocabulary =
            c.output[std::size_t(l)] * unembedTimesEmbed;
        for (int h = 0; h < c.heads; ++h) {
            // eig(W_E W_V W_O W_U) without its zeros = eig(W_O (W_U W_E) W_V), dh × dh.
            const Eigen::MatrixXd circuit =
                outputThroughVocabulary.middleRows(Eigen::Index(h) * c.headDim, c.headDim)
                    .cast<double>() *
                headColumns(c.value[std::size_t(l)], kvHeadOf(c, h), c.headDim);
            const Eigen::EigenSolver<Eigen::MatrixXd> solver(circuit, false);
            double sum = 0.0, magnitude = 0.0;
            for (const std::complex<double>& lambda : solver.eigenvalues()) {
                sum += lambda.real();
                magnitude += std::abs(lambda);
            }
            scores.push_back(magnitude > 0.0 ? sum / magnitude : 0.0);
        }
    }
    return scores;
}
} // namespace headlight::analysis
