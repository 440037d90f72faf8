#include "analysis/steering_vector.h"

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
} // namespace

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
