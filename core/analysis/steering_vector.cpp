#include "analysis/steering_vector.h"

#include <Eigen/Dense>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// The mean of the last rows of `texts`; `set` names them in refusals.
std::vector<double> meanLastRow(const std::vector<Tensor>& texts, const char* set) {
    if (texts.empty()) throw std::invalid_argument(std::string("the ") + set + " set is empty");
    const int64_t width = texts.front().dim(1);
    std::vector<double> mean(std::size_t(width), 0.0);
    for (const Tensor& rows : texts) {
        if (rows.rank() != 2 || rows.dim(1) != width || rows.dim(0) == 0)
            throw std::invalid_argument(std::string("a text of the ") + set + " set gave " +
                                        rows.shapeString() + " activations, not [T, " +
                                        std::to_string(width) + "]");
        const float* last = rows.data() + (rows.dim(0) - 1) * width;
        for (int64_t c = 0; c < width; ++c)
            mean[std::size_t(c)] += double(last[c]) / double(texts.size());
    }
    return mean;
}

// The last row of each text in double, [texts, d]; `set` names them in refusals.
Eigen::MatrixXd lastRows(const std::vector<Tensor>& texts, const char* set) {
    meanLastRow(texts, set); // the same refusals
    const int64_t width = texts.front().dim(1);
    Eigen::MatrixXd rows(Eigen::Index(texts.size()), Eigen::Index(width));
    for (std::size_t i = 0; i < texts.size(); ++i)
        for (int64_t c = 0; c < width; ++c)
            rows(Eigen::Index(i), Eigen::Index(c)) =
                texts[i].data()[(texts[i].dim(0) - 1) * width + c];
    return rows;
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
    const Eigen::MatrixXd p = lastRows(positive, "positive"), n = lastRows(negative, "negative");
    if (p.cols() != n.cols())
        throw std::invalid_argument("the two sets' activations differ in width");
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
    Tensor direction({int64_t(v.size())});
    for (Eigen::Index c = 0; c < v.size(); ++c)
        direction.data()[c] = float(v(c));
    return direction;
}

Tensor differenceOfMeans(const std::vector<Tensor>& positive, const std::vector<Tensor>& negative) {
    const std::vector<double> p = meanLastRow(positive, "positive");
    const std::vector<double> n = meanLastRow(negative, "negative");
    if (p.size() != n.size())
        throw std::invalid_argument("the two sets' activations differ in width");
    Tensor direction({int64_t(p.size())});
    for (std::size_t c = 0; c < p.size(); ++c)
        direction.data()[c] = float(p[c] - n[c]);
    return direction;
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
