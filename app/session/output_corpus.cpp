#include "output_corpus.h"

#include "analysis/output_effect.h"
#include "text_input.h"

#include <stdexcept>

namespace headlight::app {
namespace {

Trace outputPass(const TransformerModel& model, const ModelInput& input,
                 const variants::VariantSpec& spec) {
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = true;
    return model.forward(input, capture, spec);
}

void poolEffect(EffectRow& row, const analysis::OutputEffect& effect) {
    long long valid = 0;
    for (uint8_t v : effect.valid)
        valid += v != 0;
    if (valid == 0) return;
    // Why weighted: the row's means are over positions, whatever the texts' lengths.
    const double before = double(row.positions), total = before + double(valid);
    row.meanKl = (row.meanKl * before + effect.meanKl * double(valid)) / total;
    row.top1Agreement = (row.top1Agreement * before + effect.top1Agreement * double(valid)) / total;
    row.meanTopKFlips = (row.meanTopKFlips * before + effect.meanTopKFlips * double(valid)) / total;
    row.positions += valid;
    ++row.texts;
}
} // namespace

std::vector<EffectRow> corpusOutputEffect(const LoadedModel& model, const QStringList& texts,
                                          const std::vector<NamedVariant>& variants,
                                          const EffectProgress& progress) {
    const TransformerModel& transformer = *model.model;
    if (!transformer.hasLmHead()) throw std::runtime_error(transformer.lmHeadAbsence());
    std::vector<EffectRow> rows;
    for (const NamedVariant& v : variants)
        rows.push_back({v.name});
    for (qsizetype i = 0; i < texts.size(); ++i) {
        try {
            const ModelInput input = prepareText(model.tokenizer.get(), texts[i]).input;
            if (input.ids.empty()) continue;
            const Trace exact = outputPass(transformer, input, {});
            for (std::size_t v = 0; v < variants.size(); ++v) {
                try {
                    poolEffect(rows[v],
                               analysis::outputEffect(
                                   exact, outputPass(transformer, input, variants[v].spec)));
                } catch (const std::exception& error) {
                    if (rows[v].error.isEmpty())
                        rows[v].error = QStringLiteral("text %1: %2")
                                            .arg(i + 1)
                                            .arg(QString::fromUtf8(error.what()));
                }
            }
        } catch (const std::exception& error) {
            for (EffectRow& row : rows)
                if (row.error.isEmpty())
                    row.error = QStringLiteral("text %1: %2")
                                    .arg(i + 1)
                                    .arg(QString::fromUtf8(error.what()));
        }
        if (progress) progress(std::size_t(i + 1), std::size_t(texts.size()));
    }
    return rows;
}
} // namespace headlight::app
