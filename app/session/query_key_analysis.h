#pragma once
// What the query-key embedding views show for one pass: every head's queries and keys projected
// together to 2-D (core/analysis/query_key_embedding.h) and the kind of each token. Run only while
// such a view is open: it costs a second pass that keeps each layer's queries and keys.

#include "analysis/query_key_embedding.h"
#include "model_session.h"
#include "variants/intervention.h"

#include <QString>
#include <vector>

namespace headlight::app {

struct QueryKeyAnalysis {
    int layers = 0, heads = 0;
    std::vector<analysis::QueryKeyEmbedding> embeddings; // [layers · heads]; empty with a note
    std::vector<analysis::TokenKind> kinds;              // [T]; empty without a tokenizer
    QString note; // one line: why there are no embeddings (a variant that rebuilds attention)

    const analysis::QueryKeyEmbedding& at(int layer, int head) const {
        return embeddings[std::size_t(layer) * std::size_t(heads) + std::size_t(head)];
    }
};

// The pass as the user runs it (variant and knockouts), again, keeping queries and keys only.
// A variant whose attention is not exact softmax(q·k) has no such queries and keys: the note says
// so instead of throwing.
QueryKeyAnalysis analyseQueriesKeys(const LoadedModel& model, const ModelInput& input,
                                    const variants::VariantSpec& variant,
                                    const variants::Intervention& intervention,
                                    std::vector<analysis::TokenKind> kinds);
} // namespace headlight::app
