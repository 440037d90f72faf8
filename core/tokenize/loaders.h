#pragma once
// The three ways a checkpoint folder describes its tokenizer, each turned into a PipelineTokenizer
// the way transformers' AutoTokenizer would build the fast tokenizer from it.

#include "tokenizer.h"

#include <QString>
#include <memory>

namespace headlight::tokenize {

std::unique_ptr<Tokenizer> loadTokenizerJson(const QString& folder);  // tokenizer.json
std::unique_ptr<Tokenizer> loadWordPieceVocab(const QString& folder); // vocab.txt (BERT)
std::unique_ptr<Tokenizer> loadByteLevelBpe(const QString& folder);   // vocab.json + merges.txt
} // namespace headlight::tokenize
