#pragma once
// Text in the workspace's text box -> model input and one display label per token. With a
// tokenizer, labels are the slice of the text each token covers (so byte-level BPE shows "café",
// not "cafÃ©"), white space as ␣, ↵ or ⇥ (not Ġ or Ċ), and the vocabulary's spelling for special
// tokens such as [CLS]. A checkpoint without tokenizer files takes the text as token ids
// ("101 7592 102" or "101, 7592, 102").

#include "analysis/query_key_embedding.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

struct PreparedText {
    ModelInput input;
    QStringList labels; // [T]
    // [T] with a tokenizer: the code points [begin, end) of the text each token covers (empty
    // for a special token); else empty
    std::vector<std::pair<int, int>> spans;
    std::vector<analysis::TokenKind> kinds; // [T] with a tokenizer, else empty
};

// Throws tokenize::TokenizerError or std::invalid_argument (ids that do not parse).
PreparedText prepareText(const tokenize::Tokenizer* tokenizer, const QString& text);

// The label of the code points [begin, end) of a text: the slice trimmed, or white space made
// visible; empty when the range is empty or outside the text (a special token).
QString textSliceLabel(const QList<uint>& codePoints, int begin, int end);
} // namespace headlight::app
