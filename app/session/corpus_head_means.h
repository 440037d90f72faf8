#pragma once
// Every head's mean output over a corpus, for mean-corpus head ablation
// (variants/intervention.h): m_h = (1/N) Σ o_h[t] over all N valid positions of all the texts,
// o_h the head's output before the output projection, under the variant the ablated pass runs.
// One pass per text, computed once per (model, variant, corpus) and then reused by every pass.

#include "model/transformer.h"
#include "tokenize/tokenizer.h"
#include "variants/variant_spec.h"

#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

namespace headlight::app {

struct CorpusHeadMeans {
    QString corpus;        // where the texts came from (a file name), for labels
    Tensor means;          // [L, H, d]
    int64_t positions = 0; // the valid positions pooled
    int texts = 0;
};

// Called after each text with (done, total); returning false stops the run (nullopt).
using HeadMeansProgress = std::function<bool(int done, int total)>;

// Throws std::invalid_argument for an empty corpus and, naming the text's line, for one that
// does not tokenize or run.
std::optional<CorpusHeadMeans> corpusHeadMeans(const TransformerModel& model,
                                               const tokenize::Tokenizer* tokenizer,
                                               const variants::VariantSpec& variant,
                                               const QStringList& texts,
                                               const HeadMeansProgress& progress = {});

// Head `head` of `layer`'s mean [d].
Tensor headMean(const CorpusHeadMeans& means, int layer, int head);
} // namespace headlight::app
