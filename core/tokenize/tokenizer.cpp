// Tokenizer::load: picks the files a checkpoint folder has, in the order transformers prefers them.
#include "tokenizer.h"

#include "loaders.h"

#include <QDir>
#include <QFileInfo>

namespace headlight::tokenize {

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& folder) {
    const QString path = QString::fromStdString(folder);
    const QFileInfo info(path);
    if (!info.exists()) throw TokenizerError(folder + ": no such folder");
    if (!info.isDir()) throw TokenizerError(folder + ": not a folder");
    const QDir dir(path);
    if (dir.exists("tokenizer.json")) return loadTokenizerJson(path);
    if (dir.exists("vocab.txt")) return loadWordPieceVocab(path);
    if (dir.exists("vocab.json") && dir.exists("merges.txt")) return loadByteLevelBpe(path);
    throw TokenizerError(
        folder + ": no tokenizer files (tokenizer.json, vocab.txt, or vocab.json + merges.txt)");
}
} // namespace headlight::tokenize
