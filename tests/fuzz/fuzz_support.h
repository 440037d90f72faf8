#pragma once
// Shared by the libFuzzer targets: splitting one input into several files, a scratch folder the
// file-based loaders read from, and what every tokenizer target does with the tokenizer it built.
//
// Why NUL separates the parts: none of the formats fuzzed here may contain a raw NUL (JSON forbids
// control characters, and vocab.txt / merges.txt lines are checked UTF-8 text where a NUL would
// be a token), so no input that the parsers accept is lost, and libFuzzer's mutations insert and
// delete a single byte easily.

#include "tokenize/tokenizer.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace headlight::fuzz {

// A broken invariant is a bug even when nothing crashed: report it as a crash so libFuzzer keeps
// the input.
#define HEADLIGHT_FUZZ_CHECK(condition)                                                            \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #condition, __FILE__,           \
                         __LINE__);                                                                \
            std::abort();                                                                          \
        }                                                                                          \
    } while (false)

// The input cut at NUL bytes into at most `parts` pieces; the last piece keeps any later NULs.
inline std::vector<std::string_view> splitAtNul(const uint8_t* data, std::size_t size,
                                                std::size_t parts) {
    std::vector<std::string_view> pieces;
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    while (pieces.size() + 1 < parts) {
        const std::size_t nul = rest.find('\0');
        if (nul == std::string_view::npos) break;
        pieces.push_back(rest.substr(0, nul));
        rest.remove_prefix(nul + 1);
    }
    pieces.push_back(rest);
    return pieces;
}

// One folder per fuzzing process, in memory (/dev/shm) where there is one, since every input
// rewrites its files.
class ScratchFolder {
public:
    ScratchFolder()
        : dir_(QDir("/dev/shm").exists() ? "/dev/shm/headlight-fuzz-XXXXXX"
                                         : QDir::tempPath() + "/headlight-fuzz-XXXXXX") {
        if (!dir_.isValid()) {
            std::fprintf(stderr, "cannot create a scratch folder\n");
            std::abort();
        }
    }
    std::string path() const { return dir_.path().toStdString(); }
    QString filePath(const char* name) const { return dir_.filePath(name); }

    void write(const char* name, std::string_view bytes) const {
        QFile file(filePath(name));
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            file.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size())) {
            std::fprintf(stderr, "cannot write %s\n", qPrintable(filePath(name)));
            std::abort();
        }
    }
    void remove(const char* name) const { QFile::remove(filePath(name)); }
    // Writes the file when the input has that part, removes it otherwise.
    void writeOptional(const char* name, const std::vector<std::string_view>& parts,
                       std::size_t index) const {
        if (index < parts.size())
            write(name, parts[index]);
        else
            remove(name);
    }

private:
    QTemporaryDir dir_;
};

inline std::size_t codePoints(const std::string& text) {
    std::size_t count = 0;
    for (unsigned char c : text)
        count += (c & 0xC0) != 0x80 ? 1 : 0;
    return count;
}

inline void checkEncoding(const tokenize::Tokenizer& tokenizer, const tokenize::Encoding& encoding,
                          const std::string& text, const std::string& pair) {
    const std::size_t count = encoding.ids.size();
    HEADLIGHT_FUZZ_CHECK(encoding.tokens.size() == count);
    HEADLIGHT_FUZZ_CHECK(encoding.typeIds.size() == count);
    HEADLIGHT_FUZZ_CHECK(encoding.offsets.size() == count);
    const int longest = int(std::max(codePoints(text), codePoints(pair)));
    for (std::size_t i = 0; i < count; ++i) {
        const auto [begin, end] = encoding.offsets[i];
        HEADLIGHT_FUZZ_CHECK(0 <= begin && begin <= end && end <= longest);
        tokenizer.tokenString(encoding.ids[i]); // any id, in range or not, must be safe to show
    }
}

// Encodes a few short texts (ASCII, accents, CJK, emoji, whitespace, special-token spellings, and
// words made of the vocabulary's own tokens), alone, as a pair and without special tokens, then
// checks that invalid UTF-8 is refused.
inline void exerciseTokenizer(const tokenize::Tokenizer& tokenizer) {
    std::vector<std::string> texts = {
        "Hello, world! The quick brown fox.",
        "na\xC3\xAFve caf\xC3\xA9 \xE2\x80\x94 \xC3\x9Cn\xC3\xAF\x63\xC3\xB6\x64\xC3\xA9",
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xE4\xB8\xAD\xE6\x96\x87 \xED\x95\x9C",
        "emoji \xF0\x9F\xA4\x97\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\ttab\nline  ",
        "[CLS] <s> </s> <|endoftext|> [MASK] <unk> [SEP]",
        "",
    };
    // The vocabulary's first tokens as words, then four of them run together so that merges
    // and subword continuations apply. Why not all run together: WordPiece's longest match is
    // cubic in a word's length, and a 24-token word made each input slow without adding paths.
    std::string vocabularyWords, runTogether;
    const int vocabSize = tokenizer.vocabSize();
    HEADLIGHT_FUZZ_CHECK(vocabSize >= 0);
    for (int id = 0; id < std::min(vocabSize, 24); ++id)
        vocabularyWords += tokenizer.tokenString(id) + " ";
    for (int id = 0; id < std::min(vocabSize, 4); ++id)
        runTogether += tokenizer.tokenString(id);
    texts.push_back(vocabularyWords + runTogether);
    tokenizer.tokenString(-1);
    tokenizer.tokenString(vocabSize);
    // A tokenizer may refuse a text with a TokenizerError (an unknown word and no unk token, as
    // Hugging Face refuses it too); anything else escaping is a bug.
    for (const std::string& text : texts) {
        try {
            checkEncoding(tokenizer, tokenizer.encode(text), text, "");
            checkEncoding(tokenizer, tokenizer.encode(text, std::string("second part"), true), text,
                          "second part");
            checkEncoding(tokenizer, tokenizer.encode(text, std::nullopt, false), text, "");
        } catch (const tokenize::TokenizerError&) {
        }
    }
    bool refused = false;
    try {
        tokenizer.encode("broken \xFF utf-8");
    } catch (const tokenize::TokenizerError&) {
        refused = true;
    }
    HEADLIGHT_FUZZ_CHECK(refused);
}

// Loads the scratch folder's tokenizer and exercises it; a file the loader refuses is fine.
inline void loadAndExercise(const ScratchFolder& folder) {
    std::unique_ptr<tokenize::Tokenizer> tokenizer;
    try {
        tokenizer = tokenize::Tokenizer::load(folder.path());
    } catch (const tokenize::TokenizerError&) {
        return;
    }
    exerciseTokenizer(*tokenizer);
}
} // namespace headlight::fuzz
