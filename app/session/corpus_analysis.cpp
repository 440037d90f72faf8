#include "corpus_analysis.h"

#include "analysis/divergence.h"
#include "text_input.h"

#include <QFile>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headlight::app {

QStringList readCorpus(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        throw std::runtime_error(file.errorString().toStdString());
    QStringList texts;
    for (const QString& line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) texts << line.trimmed();
    return texts;
}

PooledCorpus poolCorpus(const LoadedModel& model, const variants::VariantSpec& variant,
                        const QStringList& texts, const analysis::CorpusProgress& progress,
                        const std::atomic<bool>& cancel, std::size_t firstIndex) {
    PooledCorpus out;
    std::size_t index = firstIndex;
    const auto analyseOne = [&](const std::string& text) {
        const std::size_t corpusIndex = index++;
        const PreparedText prepared =
            prepareText(model.tokenizer.get(), QString::fromStdString(text));
        if (prepared.input.ids.empty()) throw std::invalid_argument("the text has no tokens");
        if (out.firstLabels.isEmpty()) {
            out.firstLabels = prepared.labels;
            out.firstLabelsIndex = corpusIndex;
        }
        const Trace trace = model.model->forward(prepared.input, {}, variant);
        const Tensor attention = trace.stackedProbabilities();
        out.longest = std::max(out.longest, attention.dim(2));
        return analysis::TextAnalysis{analysis::attentionEntropy(attention, trace.valid),
                                      analysis::adjacentLayerJsd(attention, trace.valid),
                                      trace.valid};
    };
    std::vector<std::string> lines;
    for (const QString& text : texts)
        lines.push_back(text.toStdString());
    out.pooled = analysis::aggregateCorpus(lines, analyseOne, progress, cancel, {}, firstIndex);
    out.stats = corpusStats(out.pooled.accumulated, out.longest, out.pooled.errors.size());
    return out;
}

CorpusStats corpusStats(const analysis::CorpusAccumulator& pooled, int64_t longest,
                        std::size_t failed) {
    CorpusStats stats;
    if (pooled.textCount() == 0) return stats;
    stats.entropy = violinSet(pooled.entropy(), float(std::log(double(longest))));
    stats.jsd = violinSet(pooled.jsd(), 1.0f);
    stats.texts = pooled.textCount();
    stats.failed = failed;
    return stats;
}
} // namespace headlight::app
