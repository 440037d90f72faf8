#include "corpus_head_means.h"

#include "text_input.h"

#include <stdexcept>

namespace headlight::app {
namespace {

// Adds the valid rows of every head's output [H, T, d] of every layer into `sums` [L·H·d];
// returns the number of valid positions.
int64_t addHeadOutputs(const Trace& trace, const std::vector<uint8_t>& mask,
                       std::vector<double>& sums) {
    const auto valid = [&](int64_t t) { return mask.empty() || mask[std::size_t(t)] != 0; };
    std::size_t at = 0;
    for (const LayerTrace& layer : trace.layers) {
        const Tensor& o = layer.headOutputs;
        const int64_t heads = o.dim(0), tokens = o.dim(1), d = o.dim(2);
        for (int64_t h = 0; h < heads; ++h, at += std::size_t(d))
            for (int64_t t = 0; t < tokens; ++t)
                for (int64_t i = 0; valid(t) && i < d; ++i)
                    sums[at + std::size_t(i)] += o.data()[(h * tokens + t) * d + i];
    }
    const int64_t tokens = trace.layers.empty() ? 0 : trace.layers.front().headOutputs.dim(1);
    int64_t count = 0;
    for (int64_t t = 0; t < tokens; ++t)
        count += valid(t) ? 1 : 0;
    return count;
}
} // namespace

std::optional<CorpusHeadMeans> corpusHeadMeans(const TransformerModel& model,
                                               const tokenize::Tokenizer* tokenizer,
                                               const variants::VariantSpec& variant,
                                               const QStringList& texts,
                                               const HeadMeansProgress& progress) {
    if (texts.isEmpty()) throw std::invalid_argument("the corpus has no texts");
    const ModelSpec& spec = model.spec();
    std::vector<double> sums(std::size_t(spec.layers * spec.heads * spec.headDim), 0.0);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.headOutputs = true;
    CorpusHeadMeans out;
    for (const QString& text : texts) {
        try {
            const ModelInput input = prepareText(tokenizer, text).input;
            out.positions +=
                addHeadOutputs(model.forward(input, capture, variant), input.attentionMask, sums);
        } catch (const std::exception& error) {
            throw std::invalid_argument("corpus text " + std::to_string(out.texts + 1) + ": " +
                                        error.what());
        }
        ++out.texts;
        if (progress && !progress(out.texts, int(texts.size()))) return std::nullopt;
    }
    if (out.positions == 0) throw std::invalid_argument("the corpus has no tokens");
    std::vector<float> means(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i)
        means[i] = float(sums[i] / double(out.positions));
    out.means = Tensor({spec.layers, spec.heads, spec.headDim}, std::move(means));
    return out;
}

Tensor headMean(const CorpusHeadMeans& means, int layer, int head) {
    const int64_t d = means.means.dim(2);
    const float* first = means.means.data() + (int64_t(layer) * means.means.dim(1) + head) * d;
    return Tensor({d}, std::vector<float>(first, first + d));
}
} // namespace headlight::app
