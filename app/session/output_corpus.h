#pragma once
// What variants do to one model's output over a corpus: for each text the exact pass and one
// pass per variant, compared at the LM head (analysis::outputEffect) and pooled over every valid
// position of every text. `headlight figures variant-effect` writes these rows.

#include "model_session.h"
#include "variants/variant_spec.h"

#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

namespace headlight::app {

struct NamedVariant {
    QString name; // the spec file's base name
    variants::VariantSpec spec;
};

struct EffectRow {
    QString variant;
    int texts = 0;           // texts both passes ran on
    long long positions = 0; // valid positions pooled
    double meanKl = 0.0;     // nats, KL(p_exact ‖ p_variant)
    double top1Agreement = 0.0;
    double meanTopKFlips = 0.0; // of the exact top 5
    QString error;              // the first refusal (a variant this model cannot run), else empty
};

using EffectProgress = std::function<void(std::size_t done, std::size_t total)>;

// One row per variant; throws std::runtime_error when the model has no LM head.
std::vector<EffectRow> corpusOutputEffect(const LoadedModel& model, const QStringList& texts,
                                          const std::vector<NamedVariant>& variants,
                                          const EffectProgress& progress);
} // namespace headlight::app
