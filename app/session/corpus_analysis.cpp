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
                        const std::atomic<bool>& cancel) {
    PooledCorpus out;
    int64_t longest = 2;
    const auto analyseOne = [&](const std::string& text) {
        const PreparedText prepared =
            prepareText(model.tokenizer.get(), QString::fromStdString(text));
        if (prepared.input.ids.empty()) throw std::invalid_argument("the text has no tokens");
        if (out.firstLabels.isEmpty()) out.firstLabels = prepared.labels;
        const Trace trace = model.model->forward(prepared.input, {}, variant);
        const Tensor attention = trace.stackedProbabilities();
        longest = std::max(longest, attention.dim(2));
        return analysis::TextAnalysis{analysis::attentionEntropy(attention, trace.valid),
                                      analysis::adjacentLayerJsd(attention, trace.valid),
                                      trace.valid};
    };
    std::vector<std::string> lines;
    for (const QString& text : texts)
        lines.push_back(text.toStdString());
    out.pooled = analysis::aggregateCorpus(lines, analyseOne, progress, cancel);
    const analysis::CorpusAccumulator& acc = out.pooled.accumulated;
    if (acc.textCount() == 0) return out;
    out.stats.entropy = violinSet(acc.entropy(), float(std::log(double(longest))));
    out.stats.jsd = violinSet(acc.jsd(), 1.0f);
    out.stats.texts = acc.textCount();
    out.stats.failed = out.pooled.errors.size();
    return out;
}
} // namespace headlight::app
