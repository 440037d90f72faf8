#include "analysis/query_key_embedding.h"

#include <Eigen/Eigenvalues>
#include <QChar>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace headlight::analysis {
namespace {

using Matrix = Eigen::MatrixXd;

// The rows of the valid tokens, features [offset, offset + d) of a [T, width] tensor.
Matrix validRows(const Tensor& t, int64_t offset, int64_t d, const std::vector<int>& rows) {
    Matrix m(Eigen::Index(rows.size()), d);
    const int64_t width = t.dim(1);
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (int64_t j = 0; j < d; ++j)
            m(Eigen::Index(r), j) = t.data()[int64_t(rows[r]) * width + offset + j];
    return m;
}

// The mean distance of the rows from their centroid.
double spread(const Matrix& m) {
    return (m.rowwise() - m.colwise().mean()).rowwise().norm().mean();
}

// The two leading eigenvectors of the joint covariance, each signed so that its largest-magnitude
// loading is positive; a missing second one (d = 1) is zero. Also the variance shares.
Matrix principalAxes(const Matrix& centred, std::array<double, 2>& explained) {
    const Matrix covariance = centred.transpose() * centred / double(centred.rows());
    const Eigen::SelfAdjointEigenSolver<Matrix> solver(covariance);
    const Eigen::VectorXd values = solver.eigenvalues(); // ascending
    const double total = values.cwiseMax(0.0).sum();
    const Eigen::Index d = covariance.rows();
    Matrix axes = Matrix::Zero(d, 2);
    for (Eigen::Index c = 0; c < 2 && c < d; ++c) {
        Eigen::VectorXd axis = solver.eigenvectors().col(d - 1 - c);
        Eigen::Index largest = 0;
        axis.cwiseAbs().maxCoeff(&largest);
        if (axis(largest) < 0.0) axis = -axis;
        axes.col(c) = axis;
        explained[std::size_t(c)] = total > 0.0 ? std::max(values(d - 1 - c), 0.0) / total : 0.0;
    }
    return axes;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
    const Eigen::Map<const Eigen::VectorXd> x(a.data(), Eigen::Index(a.size()));
    const Eigen::Map<const Eigen::VectorXd> y(b.data(), Eigen::Index(b.size()));
    const Eigen::VectorXd dx = x.array() - x.mean(), dy = y.array() - y.mean();
    const double norm = dx.norm() * dy.norm();
    return norm > 0.0 ? dx.dot(dy) / norm : 0.0;
}

// Correlation of the 2-D distance with the dot product of the normalised vectors over all pairs,
// or over every step-th query and key when there are more than kPairSide of each.
constexpr Eigen::Index kPairSide = 512;

double distanceCorrelation(const Matrix& q, const Matrix& k, const Matrix& q2, const Matrix& k2) {
    const Eigen::Index step = (q.rows() + kPairSide - 1) / kPairSide;
    std::vector<double> distance, dot;
    for (Eigen::Index i = 0; i < q.rows(); i += step)
        for (Eigen::Index j = 0; j < k.rows(); j += step) {
            distance.push_back((q2.row(i) - k2.row(j)).norm());
            dot.push_back(q.row(i).dot(k.row(j)));
        }
    return pearson(distance, dot);
}

void checkShapes(const Tensor& queries, const Tensor& keys, int heads, int kvHeads, int head,
                 const std::vector<uint8_t>& valid) {
    const bool ranks = queries.shape().size() == 2 && keys.shape().size() == 2;
    if (!ranks || heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0 || head < 0 || head >= heads ||
        queries.dim(0) != keys.dim(0) || queries.dim(1) % heads != 0 ||
        keys.dim(1) != queries.dim(1) / heads * kvHeads ||
        (!valid.empty() && int64_t(valid.size()) != queries.dim(0)))
        throw std::invalid_argument("query-key embedding: queries, keys, heads and head disagree");
}
} // namespace

QueryKeyEmbedding embedQueryKeyHead(const Tensor& queries, const Tensor& keys, int heads,
                                    int kvHeads, int head, const std::vector<uint8_t>& valid) {
    checkShapes(queries, keys, heads, kvHeads, head, valid);
    const int64_t tokens = queries.dim(0), d = queries.dim(1) / heads;
    std::vector<int> rows;
    for (int64_t t = 0; t < tokens; ++t)
        if (valid.empty() || valid[std::size_t(t)] != 0) rows.push_back(int(t));
    QueryKeyEmbedding e;
    e.tokens = int(tokens);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    e.queries.assign(std::size_t(2 * tokens), nan);
    e.keys.assign(std::size_t(2 * tokens), nan);
    if (rows.empty()) return e;

    Matrix q = validRows(queries, head * d, d, rows);
    Matrix k = validRows(keys, head / (heads / kvHeads) * d, d, rows);
    const double qSpread = spread(q), kSpread = spread(k);
    e.scale = qSpread > 0.0 && kSpread > 0.0 ? std::sqrt(kSpread / qSpread) : 1.0;
    q *= e.scale;
    k /= e.scale;
    k.rowwise() += q.colwise().mean() - k.colwise().mean();
    Matrix joint(q.rows() + k.rows(), d);
    joint << q, k;
    const Eigen::RowVectorXd centre = joint.colwise().mean();
    const Matrix axes = principalAxes(joint.rowwise() - centre, e.explained);
    const Matrix q2 = (q.rowwise() - centre) * axes, k2 = (k.rowwise() - centre) * axes;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::size_t at = std::size_t(2 * rows[r]);
        for (int c = 0; c < 2; ++c) {
            e.queries[at + std::size_t(c)] = float(q2(Eigen::Index(r), c));
            e.keys[at + std::size_t(c)] = float(k2(Eigen::Index(r), c));
        }
    }
    e.distanceCorrelation = distanceCorrelation(q, k, q2, k2);
    return e;
}

const char* tokenKindName(TokenKind kind) {
    switch (kind) {
    case TokenKind::Special:
        return "special";
    case TokenKind::Punctuation:
        return "punctuation or space";
    case TokenKind::WordStart:
        return "word start";
    case TokenKind::Continuation:
        return "word continuation";
    }
    return "";
}

std::vector<TokenKind> classifyTokens(const std::u32string& text,
                                      const std::vector<std::pair<int, int>>& offsets) {
    std::vector<TokenKind> kinds;
    int previousBegin = -1;
    for (const auto& [begin, end] : offsets) {
        if (end <= begin || begin < 0 || std::size_t(end) > text.size()) {
            kinds.push_back(TokenKind::Special);
            previousBegin = -1;
            continue;
        }
        int first = begin;
        while (first < end && QChar::isSpace(text[std::size_t(first)]))
            ++first;
        const bool wordy = first < end && QChar::isLetterOrNumber(text[std::size_t(first)]);
        if (!wordy)
            kinds.push_back(TokenKind::Punctuation);
        else if (begin == previousBegin || (first == begin && first > 0 &&
                                            QChar::isLetterOrNumber(text[std::size_t(first - 1)])))
            kinds.push_back(TokenKind::Continuation);
        else
            kinds.push_back(TokenKind::WordStart);
        previousBegin = begin;
    }
    return kinds;
}
} // namespace headlight::analysis
