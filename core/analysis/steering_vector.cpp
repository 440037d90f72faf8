#include "analysis/steering_vector.h"

#include <Eigen/Dense>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// The last row of each text in double, [texts, d]; `set` names them in refusals.
Eigen::MatrixXd lastRows(const std::vector<Tensor>& texts, const char* set) {
    if (texts.empty()) throw std::invalid_argument(std::string("the ") + set + " set is empty");
    const int64_t width = texts.front().dim(1);
    Eigen::MatrixXd rows(Eigen::Index(texts.size()), Eigen::Index(width));
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const Tensor& text = texts[i];
        if (text.rank() != 2 || text.dim(1) != width || text.dim(0) == 0)
            throw std::invalid_argument(std::string("a text of the ") + set + " set gave " +
                                        text.shapeString() + " activations, not [T, " +
                                        std::to_string(width) + "]");
        const float* last = text.data() + (text.dim(0) - 1) * width;
        for (int64_t c = 0; c < width; ++c)
            rows(Eigen::Index(i), Eigen::Index(c)) = last[c];
    }
    return rows;
}

// Both sets' last rows, refused when their widths differ.
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> lastRowsOfBoth(const std::vector<Tensor>& positive,
                                                           const std::vector<Tensor>& negative) {
    std::pair rows{lastRows(positive, "positive"), lastRows(negative, "negative")};
    if (rows.first.cols() != rows.second.cols())
        throw std::invalid_argument("the two sets' activations differ in width");
    return rows;
}

Tensor directionOf(const Eigen::VectorXd& v) {
    Tensor direction({int64_t(v.size())});
    for (Eigen::Index c = 0; c < v.size(); ++c)
        direction.data()[c] = float(v(c));
    return direction;
}

// The unit right singular vector of the largest singular value of `rows` centred: through the
// Gram matrix, since there are far fewer rows (texts) than columns (the model's width).
Eigen::VectorXd firstComponent(Eigen::MatrixXd rows) {
    rows.rowwise() -= rows.colwise().mean();
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> gram(rows * rows.transpose());
    const Eigen::Index top = rows.rows() - 1; // eigenvalues ascend
    if (gram.info() != Eigen::Success || !(gram.eigenvalues()(top) > 0.0))
        throw std::invalid_argument("the pairs' rows do not vary: no principal component");
    const Eigen::VectorXd v = rows.transpose() * gram.eigenvectors().col(top);
    return v / v.norm();
}
} // namespace

Tensor pairedPrincipalComponent(const std::vector<Tensor>& positive,
                                const std::vector<Tensor>& negative, PairedComponent method) {
    if (positive.size() != negative.size())
        throw std::invalid_argument("the positive set has " + std::to_string(positive.size()) +
                                    " texts and the negative " + std::to_string(negative.size()) +
                                    ": principal components pair them line by line");
    if (positive.size() < 2)
        throw std::invalid_argument("principal components need at least two pairs of texts");
    const auto [p, n] = lastRowsOfBoth(positive, negative);
    Eigen::MatrixXd rows;
    if (method == PairedComponent::Diff) {
        rows = p - n;
    } else {
        const Eigen::MatrixXd centre = (p + n) / 2.0;
        rows.resize(2 * p.rows(), p.cols());
        for (Eigen::Index i = 0; i < p.rows(); ++i) {
            rows.row(2 * i) = p.row(i) - centre.row(i);
            rows.row(2 * i + 1) = n.row(i) - centre.row(i);
        }
    }
    Eigen::VectorXd v = firstComponent(std::move(rows));
    const Eigen::VectorXd above = p * v, below = n * v;
    const auto pairs = (above.array() > below.array()).count();
    const auto reversed = (above.array() < below.array()).count();
    if (reversed > pairs || (reversed == pairs && above.mean() < below.mean())) v = -v;
    return directionOf(v);
}

Tensor differenceOfMeans(const std::vector<Tensor>& positive, const std::vector<Tensor>& negative) {
    const auto [p, n] = lastRowsOfBoth(positive, negative);
    return directionOf((p.colwise().mean() - n.colwise().mean()).transpose());
}

variants::ResidualEdit steeringEdit(const Tensor& direction, float strength, int stream,
                                    const std::string& name) {
    variants::ResidualEdit edit;
    edit.layer = stream;
    edit.width = int64_t(direction.size());
    edit.name = name;
    edit.rows = [direction, strength](const Tensor& x) {
        Tensor out = x;
        const int64_t width = int64_t(direction.size());
        for (std::size_t i = 0; i < out.size(); ++i)
            out.data()[i] += strength * direction.data()[int64_t(i) % width];
        return out;
    };
    return edit;
}
} // namespace headlight::analysis
