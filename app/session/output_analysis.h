#pragma once
// What the LM-head views show for one pass: the logit lens (core/analysis/logit_lens.h) and the
// variant's effect on the output against exact attention (core/analysis/output_effect.h), with
// the display text of every token they name. Run only while such a view is open: the lens costs
// one unembedding per layer, the effect a second pass.

#include "analysis/logit_lens.h"
#include "analysis/output_effect.h"
#include "model_session.h"

#include <QString>
#include <map>
#include <optional>

namespace headlight::app {

struct OutputAnalysis {
    std::optional<analysis::LogitLens> lens;
    std::optional<analysis::OutputEffect> effect; // none when the variant is exact attention
    std::map<int32_t, QString> tokenText;         // the ids the lens and the effect name
    QString note; // one line: why there is no lens (no LM head, a pooled pass), else empty

    QString textOf(int32_t id) const;
};

// `variantTrace` is the pass as the user runs it, captured with hidden states and logits when the
// model has an LM head; the exact pass is run here when the variant is not vanilla.
OutputAnalysis analyseOutput(const LoadedModel& model, const ModelInput& input,
                             const Trace& variantTrace, const variants::VariantSpec& variant);

// The vocabulary's spelling of a token, readable: a byte-level token decoded to its text, white
// space as ␣ ↵ ⇥; "#id" without a tokenizer.
QString vocabularyLabel(const tokenize::Tokenizer* tokenizer, int32_t id);
} // namespace headlight::app
