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
        Eigen::VectorXd gain = Eigen::VectorXd::Ones(hidden);
        if (processing_.foldNorms) gain = readingGain(weights_.finalNorm, hidden).cast<double>();
        constexpr int64_t kBlock = 1024;
        for (int64_t first = 0; first < vocab; first += kBlock) {
            const int64_t count = std::min(kBlock, vocab - first);
            Eigen::MatrixXd embed = tokenRows(true, first, count);
            if (processing_.center) embed.colwise() -= embed.rowwise().mean();
            Eigen::MatrixXd unembed = head.kind == HostLmHead::Kind::Tied
                                          ? tokenRows(true, first, count)
                                          : tokenRows(false, first, count);
            unembed = unembed * gain.asDiagonal();
            if (processing_.center) unembed.colwise() -= unembed.rowwise().mean();
            product.noalias() += unembed.transpose() * embed;
            unembedSum += unembed.colwise().sum().transpose();
            embedSum += embed.colwise().sum().transpose();
        }
        // center_unembed: W_U minus its mean over the vocabulary, so Σ_v (u_v − ū) e_vᵀ.
        product -= unembedSum * embedSum.transpose() / double(vocab);
        return product;
    }

private:
    // Rows [first, first + count) of the token embedding or the untied LM head, [count, D].
    Eigen::MatrixXd tokenRows(bool embedding, int64_t first, int64_t count) const {
        const Tensor& dense = embedding ? weights_.tokenEmbedding : weights_.lmHead.weight;
        const io::StoredMatrix& stored =
            embedding ? weights_.tokenEmbeddingStored : weights_.lmHead.stored;
        const int hidden = spec_.hidden;
        RowMajor rows(count, hidden);
        if (!dense.empty())
            rows = Eigen::Map<const RowMajor>(dense.data() + first * hidden, count, hidden);
        else
            io::widenRows(stored, first, count, rows.data());
        return rows.cast<double>();
    }

    const HostWeights& weights_;
    const ModelSpec& spec_;
    Processing processing_;
};

// ||A B||_F for a factored d × d matrix is ||R_A R_Bᵀ||_F with A = Q_A R_A and Bᵀ = Q_B R_B;
// the triangular factors make the L·H × L·H products cheap.
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
    const int pairs = c.layers * (c.layers - 1) / 2;
    int done = 0;
    for (int l1 = 0; l1 < c.layers; ++l1) {
        const Factored ov = factorsOf(c, l1, true, false);
        const Eigen::MatrixXd outputs = c.output[std::size_t(l1)].cast<double>(); // [H·dh, D]
        std::vector<Eigen::MatrixXd> leftCore;
        std::vector<double> leftNorm;
        for (int h = 0; h < c.heads; ++h) {
            leftCore.push_back(triangularFactor(ov.left[std::size_t(h)]));
            leftNorm.push_back(
                (leftCore.back() * triangularFactor(ov.right[std::size_t(h)]).transpose()).norm());
        }
        for (int l2 = l1 + 1; l2 < c.layers; ++l2) {
            const Factored other = kind == CompositionKind::Value
                                       ? factorsOf(c, l2, true, false)
                                       : factorsOf(c, l2, false, kind == CompositionKind::Key);
            for (int h2 = 0; h2 < c.heads; ++h2) {
                const Eigen::MatrixXd& a2 = other.left[std::size_t(h2)];
                const Eigen::MatrixXd r2 = triangularFactor(other.right[std::size_t(h2)]);
                const double rightNorm = (triangularFactor(a2) * r2.transpose()).norm();
                // Every left head's W_O^a · A2 · R2ᵀ at once: [H·dh, dh].
                const Eigen::MatrixXd inner = outputs * (a2 * r2.transpose());
                for (int h1 = 0; h1 < c.heads; ++h1) {
                    const double product =
                        (leftCore[std::size_t(h1)] *
                         inner.middleRows(Eigen::Index(h1) * c.headDim, c.headDim))
                            .norm();
                    scores[(std::size_t(l1) * c.heads + h1) * total + std::size_t(l2) * c.heads +
                           h2] = product / (leftNorm[std::size_t(h1)] * rightNorm);
                }
            }
            if (progress) progress(++done, pairs);
        }
    }
    return scores;
}

std::vector<double> copyingScores(const HeadCircuits& c) {
    if (c.unembedTimesEmbed.size() == 0) return {};
    std::vector<double> scores;
    for (int l = 0; l < c.layers; ++l) {
        const Factored ov = factorsOf(c, l, true, false);
        for (int h = 0; h < c.heads; ++h) {
            // eig(W_E W_V W_O W_U) without its zeros = eig(W_O (W_U W_E) W_V), dh × dh.
            const Eigen::MatrixXd circuit = ov.right[std::size_t(h)].transpose() *
                                            c.unembedTimesEmbed * ov.left[std::size_t(h)];
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
