// The tokenizers against Hugging Face's behaviour: hand-checked encodings of small vocabularies in
// tests/data/tokenizers (WordPiece from vocab.txt, byte-level BPE from vocab.json + merges.txt,
// tokenizer.json with byte fallback, Metaspace and added tokens), the error messages for broken
// folders, the tokenizations in tests/data/models/*/golden.json (written by our own reference
// tokenizers, tools/golden/tokenizers_ref.py, from Hugging Face's sources; no `transformers` or
// `tokenizers` code ran to make them: docs/golden-references.md), and the `headlight tokenize`
// command.
#include "tokenize/tokenizer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace headlight::tokenize;

namespace {

const QString kData = QStringLiteral(HEADLIGHT_TEST_DATA "/tokenizers/");

// One expected token: its string, id, source span and type id.
struct Row {
    const char* token;
    int id;
    int begin;
    int end;
    int type = 0;
};

QString rowText(const std::string& token, int id, int begin, int end, int type) {
    return QString("%1|%2|%3-%4|%5")
        .arg(QString::fromStdString(token))
        .arg(id)
        .arg(begin)
        .arg(end)
        .arg(type);
}

QStringList rowsOf(const Encoding& encoding) {
    QStringList rows;
    for (size_t i = 0; i < encoding.ids.size(); ++i)
        rows << rowText(encoding.tokens[i], encoding.ids[i], encoding.offsets[i].first,
                        encoding.offsets[i].second, encoding.typeIds[i]);
    return rows;
}

QStringList rowsOf(const std::vector<Row>& expected) {
    QStringList rows;
    for (const Row& row : expected)
        rows << rowText(row.token, row.id, row.begin, row.end, row.type);
    return rows;
}

std::unique_ptr<Tokenizer> load(const char* folder) {
    return Tokenizer::load((kData + folder).toStdString());
}

QStringList encodeRows(const char* folder, const std::string& text,
                       const std::optional<std::string>& pair = std::nullopt,
                       bool addSpecialTokens = true) {
    return rowsOf(load(folder)->encode(text, pair, addSpecialTokens));
}

QString loadError(const QString& folder) {
    try {
        Tokenizer::load(folder.toStdString());
    } catch (const TokenizerError& error) {
        return QString::fromUtf8(error.what());
    }
    return "no error";
}

QString encodeError(const Tokenizer& tokenizer, const std::string& text) {
    try {
        tokenizer.encode(text);
    } catch (const TokenizerError& error) {
        return QString::fromUtf8(error.what());
    }
    return "no error";
}

void writeFile(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
}

struct CliRun {
    int exitCode;
    QString out;
    QString err;
};

CliRun runCli(const QStringList& args) {
    QProcess process;
    process.start(HEADLIGHT_BINARY, QStringList{"tokenize"} + args);
    process.waitForFinished(60000);
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

QJsonArray intArray(const std::vector<int>& values) {
    QJsonArray array;
    for (int value : values)
        array.append(value);
    return array;
}

QJsonArray offsetArray(const Encoding& encoding) {
    QJsonArray array;
    for (const auto& [begin, end] : encoding.offsets)
        array.append(QJsonArray{begin, end});
    return array;
}

QJsonArray tokenArray(const Encoding& encoding) {
    QJsonArray array;
    for (const std::string& token : encoding.tokens)
        array.append(QString::fromStdString(token));
    return array;
}

// One golden case against our encoding; returns "" when they agree, else what differs.
QString goldenMismatch(const Tokenizer& tokenizer, const QJsonObject& golden) {
    std::optional<std::string> pair;
    if (golden.value("text_pair").isString())
        pair = golden.value("text_pair").toString().toStdString();
    const Encoding encoding = tokenizer.encode(golden.value("text").toString().toStdString(), pair,
                                               golden.value("add_special_tokens").toBool(true));
    const std::pair<const char*, QJsonArray> fields[] = {
        {"ids", intArray(encoding.ids)},
        {"token_type_ids", intArray(encoding.typeIds)},
        {"tokens", tokenArray(encoding)},
        {"offsets", offsetArray(encoding)}};
    for (const auto& [name, ours] : fields) {
        const QJsonArray theirs = golden.value(name).toArray();
        if (theirs != ours)
            return QString("%1: expected %2, got %3")
                .arg(name, QString::fromUtf8(QJsonDocument(theirs).toJson(QJsonDocument::Compact)),
                     QString::fromUtf8(QJsonDocument(ours).toJson(QJsonDocument::Compact)));
    }
    return {};
}
// Every text case of one golden.json; returns the first problem, counting the cases checked.
QString checkGoldenFile(const QString& folder, const QByteArray& json, int& checked) {
    try {
        const auto tokenizer = Tokenizer::load(folder.toStdString());
        for (const QJsonValue& value :
             QJsonDocument::fromJson(json).object().value("cases").toArray()) {
            const QJsonObject golden = value.toObject();
            if (golden.value("input").toString() != "text") continue;
            const QString mismatch = goldenMismatch(*tokenizer, golden);
            if (!mismatch.isEmpty()) return golden.value("name").toString() + ": " + mismatch;
            ++checked;
        }
    } catch (const TokenizerError& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}
} // namespace

class TestTokenizers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // --- WordPiece from vocab.txt (BERT) ---

    void wordPieceLowercasesAndStripsAccents() {
        QCOMPARE(encodeRows("bert_uncased", "Café NAÏVE"), rowsOf({{"[CLS]", 2, 0, 0},
                                                                   {"cafe", 17, 0, 4},
                                                                   {"naive", 18, 5, 10},
                                                                   {"[SEP]", 3, 0, 0}}));
    }

    void wordPieceSplitsPunctuation() {
        QCOMPARE(encodeRows("bert_uncased", "Hello, World!"), rowsOf({{"[CLS]", 2, 0, 0},
                                                                      {"hello", 21, 0, 5},
                                                                      {",", 12, 5, 6},
                                                                      {"world", 22, 7, 12},
                                                                      {"!", 14, 12, 13},
                                                                      {"[SEP]", 3, 0, 0}}));
        QCOMPARE(encodeRows("bert_uncased", "fox's", std::nullopt, false),
                 rowsOf({{"fox", 8, 0, 3}, {"'", 15, 3, 4}, {"s", 16, 4, 5}}));
    }

    void wordPieceSplitsEachCjkCharacter() {
        QCOMPARE(encodeRows("bert_uncased", "中文fox", std::nullopt, false),
                 rowsOf({{"中", 19, 0, 1}, {"文", 20, 1, 2}, {"fox", 8, 2, 5}}));
    }

    void wordPieceUsesContinuationPieces() {
        QCOMPARE(encodeRows("bert_uncased", "unaffable", std::nullopt, false),
                 rowsOf({{"un", 9, 0, 2}, {"##aff", 10, 2, 5}, {"##able", 11, 5, 9}}));
    }

    void wordPieceMapsUncoveredWordsToUnk() {
        // An emoji has no piece; "foxes" starts with "fox" but "##es" is missing, so the whole
        // word is unknown, as BERT's greedy matcher decides.
        QCOMPARE(encodeRows("bert_uncased", "fox 🦊 foxes", std::nullopt, false),
                 rowsOf({{"fox", 8, 0, 3}, {"[UNK]", 1, 4, 5}, {"[UNK]", 1, 6, 11}}));
    }

    void wordPieceLimitsWordsTo100Characters() {
        const Encoding hundred =
            load("bert_uncased")->encode(std::string(100, 'a'), std::nullopt, false);
        QCOMPARE(hundred.ids.size(), size_t(100));
        QCOMPARE(hundred.tokens.front(), std::string("a"));
        QCOMPARE(hundred.tokens.back(), std::string("##a"));
        QCOMPARE(hundred.offsets.back(), std::make_pair(99, 100));
        QCOMPARE(encodeRows("bert_uncased", std::string(101, 'a'), std::nullopt, false),
                 rowsOf({{"[UNK]", 1, 0, 101}}));
    }

    void wordPiecePairHasTypeIds() {
        QCOMPARE(encodeRows("bert_uncased", "the fox", std::string("quick brown")),
                 rowsOf({{"[CLS]", 2, 0, 0},
                         {"the", 5, 0, 3},
                         {"fox", 8, 4, 7},
                         {"[SEP]", 3, 0, 0},
                         {"quick", 6, 0, 5, 1},
                         {"brown", 7, 6, 11, 1},
                         {"[SEP]", 3, 0, 0, 1}}));
    }

    void wordPieceKeepsSpecialTokensWhole() {
        QCOMPARE(encodeRows("bert_uncased", "the [MASK] fox", std::nullopt, false),
                 rowsOf({{"the", 5, 0, 3}, {"[MASK]", 4, 4, 10}, {"fox", 8, 11, 14}}));
    }

    void wordPieceCleansControlsAndWhitespace() {
        QCOMPARE(encodeRows("bert_uncased", "the\tfox\x01\u00A0quick", std::nullopt, false),
                 rowsOf({{"the", 5, 0, 3}, {"fox", 8, 4, 7}, {"quick", 6, 9, 14}}));
    }

    void emptyTextHasOnlySpecialTokens() {
        const QStringList specials = rowsOf({{"[CLS]", 2, 0, 0}, {"[SEP]", 3, 0, 0}});
        QCOMPARE(encodeRows("bert_uncased", ""), specials);
        QCOMPARE(encodeRows("bert_uncased", "  \t "), specials);
        QCOMPARE(encodeRows("bert_uncased", "", std::nullopt, false), QStringList());
        QCOMPARE(encodeRows("gpt2", ""), QStringList());
    }

    void casedConfigKeepsCaseAccentsAndCjkWords() {
        QCOMPARE(
            encodeRows("bert_cased", "The café the 中文", std::nullopt, false),
            rowsOf(
                {{"[UNK]", 1, 0, 3}, {"[UNK]", 1, 4, 8}, {"the", 5, 9, 12}, {"[UNK]", 1, 13, 15}}));
    }

    void tokenizerJsonWordPieceMatchesVocabTxt() {
        const auto fromJson = load("wordpiece_json");
        const auto fromVocab = load("bert_uncased");
        QCOMPARE(fromJson->kind(), std::string("wordpiece"));
        QCOMPARE(fromVocab->kind(), std::string("wordpiece"));
        QCOMPARE(fromJson->vocabSize(), 26);
        for (const char* text :
             {"Hello, World!", "Café NAÏVE 中文fox", "the [MASK] unaffable 🦊", ""})
            QCOMPARE(rowsOf(fromJson->encode(text, std::string("quick brown"))),
                     rowsOf(fromVocab->encode(text, std::string("quick brown"))));
    }

    // --- Byte-level BPE from vocab.json + merges.txt (GPT-2, RoBERTa) ---

    void gpt2RegexSplitsContractions() {
        // The merge "n '" (rank 0) would join "don" and "'t" if the regex did not split them.
        QCOMPARE(encodeRows("gpt2", "don't"), rowsOf({{"don", 263, 0, 3}, {"'t", 260, 3, 5}}));
        QCOMPARE(encodeRows("gpt2", "it's"), rowsOf({{"it", 276, 0, 2}, {"'s", 261, 2, 4}}));
    }

    void gpt2RegexSplitsNumbersFromLetters() {
        QCOMPARE(encodeRows("gpt2", "abc123"),
                 rowsOf({{"a", 64, 0, 1}, {"b", 65, 1, 2}, {"c", 66, 2, 3}, {"123", 265, 3, 6}}));
    }

    void gpt2RegexLeavesOneSpaceForTheNextWord() {
        QCOMPARE(encodeRows("gpt2", "a   b"),
                 rowsOf({{"a", 64, 0, 1}, {"ĠĠ", 258, 1, 3}, {"Ġb", 259, 3, 5}}));
        QCOMPARE(encodeRows("gpt2", "Hello  "), rowsOf({{"Hello", 270, 0, 5}, {"ĠĠ", 258, 5, 7}}));
    }

    void gpt2RegexSplitsNewlinesBeforeAWord() {
        QCOMPARE(encodeRows("gpt2", "a\n\nb"),
                 rowsOf({{"a", 64, 0, 1}, {"Ċ", 198, 1, 2}, {"Ċ", 198, 2, 3}, {"b", 65, 3, 4}}));
        QCOMPARE(encodeRows("gpt2", "a\n\n"), rowsOf({{"a", 64, 0, 1}, {"ĊĊ", 266, 1, 3}}));
    }

    void gpt2AddsNothingAndKeepsTheSpaceInOffsets() {
        const auto tokenizer = load("gpt2");
        QCOMPARE(tokenizer->kind(), std::string("byte-level-bpe"));
        QCOMPARE(rowsOf(tokenizer->encode("Hello world")),
                 rowsOf({{"Hello", 270, 0, 5}, {"Ġworld", 275, 5, 11}}));
    }

    void gpt2BytesOfOneCharacterShareItsOffsets() {
        QCOMPARE(encodeRows("gpt2", "héllo"), rowsOf({{"h", 71, 0, 1},
                                                      {"Ã", 127, 1, 2},
                                                      {"©", 102, 1, 2},
                                                      {"ll", 268, 2, 4},
                                                      {"o", 78, 4, 5}}));
        QCOMPARE(encodeRows("gpt2", "🦊"),
                 rowsOf({{"ð", 172, 0, 1}, {"Ł", 253, 0, 1}, {"¦", 99, 0, 1}, {"Ĭ", 232, 0, 1}}));
    }

    void gpt2EndOfTextStaysWhole() {
        QCOMPARE(encodeRows("gpt2", "<|endoftext|>Hello"),
                 rowsOf({{"<|endoftext|>", 277, 0, 13}, {"Hello", 270, 13, 18}}));
    }

    void gpt2PairHasTypeIds() {
        QCOMPARE(encodeRows("gpt2", "Hello", std::string("world")), rowsOf({{"Hello", 270, 0, 5},
                                                                            {"w", 86, 0, 1, 1},
                                                                            {"or", 272, 1, 3, 1},
                                                                            {"ld", 274, 3, 5, 1}}));
    }

    void robertaWrapsAndTrimsSpacesFromOffsets() {
        QCOMPARE(encodeRows("roberta", "Hello world"), rowsOf({{"<s>", 0, 0, 0},
                                                               {"Hello", 274, 0, 5},
                                                               {"Ġworld", 279, 6, 11},
                                                               {"</s>", 2, 0, 0}}));
    }

    void robertaPairIsDoubleSeparatedWithTypeZero() {
        QCOMPARE(encodeRows("roberta", "Hello", std::string("world")), rowsOf({{"<s>", 0, 0, 0},
                                                                               {"Hello", 274, 0, 5},
                                                                               {"</s>", 2, 0, 0},
                                                                               {"</s>", 2, 0, 0},
                                                                               {"w", 90, 0, 1},
                                                                               {"or", 276, 1, 3},
                                                                               {"ld", 278, 3, 5},
                                                                               {"</s>", 2, 0, 0}}));
    }

    void robertaMaskTakesTheSpaceBeforeIt() {
        // <mask> is lstrip: it swallows the space, which its offsets then leave out.
        QCOMPARE(encodeRows("roberta", "Hello <mask>"), rowsOf({{"<s>", 0, 0, 0},
                                                                {"Hello", 274, 0, 5},
                                                                {" <mask>", 281, 6, 12},
                                                                {"</s>", 2, 0, 0}}));
    }

    // --- tokenizer.json: byte-fallback BPE, Metaspace, added tokens ---

    void llamaStyleBpePrependsAndFallsBackToBytes() {
        const auto tokenizer = load("llama_bpe");
        QCOMPARE(tokenizer->kind(), std::string("bpe"));
        QCOMPARE(rowsOf(tokenizer->encode("Hello world")),
                 rowsOf({{"<s>", 1, 0, 0}, {"▁Hello", 271, 0, 5}, {"▁world", 276, 5, 11}}));
        QCOMPARE(rowsOf(tokenizer->encode("Hello €")), rowsOf({{"<s>", 1, 0, 0},
                                                               {"▁Hello", 271, 0, 5},
                                                               {"▁", 259, 5, 6},
                                                               {"<0xE2>", 229, 6, 7},
                                                               {"<0x82>", 133, 6, 7},
                                                               {"<0xAC>", 175, 6, 7}}));
    }

    void llamaStyleSpecialTokensAndPairs() {
        QCOMPARE(encodeRows("llama_bpe", "Hello</s>"),
                 rowsOf({{"<s>", 1, 0, 0}, {"▁Hello", 271, 0, 5}, {"</s>", 2, 5, 9}}));
        QCOMPARE(encodeRows("llama_bpe", "Hello", std::string("world")),
                 rowsOf({{"<s>", 1, 0, 0},
                         {"▁Hello", 271, 0, 5},
                         {"<s>", 1, 0, 0, 1},
                         {"▁world", 276, 0, 5, 1}}));
        QCOMPARE(encodeRows("llama_bpe", ""), rowsOf({{"<s>", 1, 0, 0}}));
    }

    void metaspaceFusesUnknownsAndPrependsOnlyFirst() {
        QCOMPARE(encodeRows("metaspace_bpe", "ab€€ cd"),
                 rowsOf({{"▁ab", 7, 0, 2}, {"<unk>", 0, 2, 4}, {"▁cd", 9, 4, 7}}));
        QCOMPARE(encodeRows("metaspace_bpe", "cd[X]"),
                 rowsOf({{"▁cd", 9, 0, 2}, {"[X]", 10, 2, 5}}));
        // After an added token the piece does not start the text, so prepend_scheme "first" adds no
        // ▁.
        QCOMPARE(encodeRows("metaspace_bpe", "[X]cd"),
                 rowsOf({{"[X]", 10, 0, 3}, {"c", 4, 3, 4}, {"d", 5, 4, 5}}));
    }

    void addedTokensHonourNormalizationAndStripping() {
        // "my" and "name" are matched after lowercasing; "my" takes the spaces around it; "ony"
        // (single_word) is not cut out of "anthony".
        QCOMPARE(encodeRows("added_tokens_json", "[CLS] My name is Anthony [SEP]"),
                 rowsOf({{"[CLS]", 1, 0, 5},
                         {" my ", 3, 5, 9},
                         {"name", 4, 9, 13},
                         {"is", 5, 14, 16},
                         {"anthony", 6, 17, 24},
                         {"[SEP]", 2, 25, 30}}));
        QCOMPARE(encodeRows("added_tokens_json", "Hi <mask> there\t<mask>\t<mask>\u2000"),
                 rowsOf({{"hi", 7, 0, 2},
                         {" <mask> ", 9, 2, 10},
                         {"there", 8, 10, 15},
                         {"\t<mask>\t", 9, 15, 23},
                         {"<mask>\u2000", 9, 23, 30}}));
    }

    void tokenStringsIncludeAddedTokens() {
        const auto tokenizer = load("gpt2");
        QCOMPARE(tokenizer->tokenString(270), std::string("Hello"));
        QCOMPARE(tokenizer->tokenString(277), std::string("<|endoftext|>"));
        QCOMPARE(tokenizer->tokenString(100000), std::string());
        QCOMPARE(tokenizer->vocabSize(), 278);
    }

    // Gemma 3's tokenizer.json was refused ("merge 407579 ... uses '\uFEFF\uFEFF', which is not
    // in the vocabulary"): Qt 6.4's UTF-8 decoding drops a leading U+FEFF, so every token made of
    // U+FEFF lost one. A hand-made file with such tokens, merges ([a, b] pairs, as Gemma 3 writes
    // them) and an added token; the ids are what Hugging Face's tokenizers 0.23.2 gives.
    void tokensOfByteOrderMarksKeepThem() {
        const auto tokenizer = load("bom_merges");
        const std::string bom = "\xEF\xBB\xBF";
        QCOMPARE(tokenizer->encode(bom + bom + bom + bom + "a").ids, (std::vector<int>{2, 3}));
        QCOMPARE(tokenizer->encode(bom + "a" + bom + bom + bom + "X" + bom).ids,
                 (std::vector<int>{4, 1, 5, 0}));
        QCOMPARE(tokenizer->tokenString(0), bom);
        QCOMPARE(tokenizer->tokenString(5), bom + "X");
    }

    // As serde's HashMap in HF: a token listed twice keeps its last id, and the id it had before
    // names nothing; a merge listed twice takes its later rank ("b c" then outranks "a b").
    void duplicatesInVocabAndMergesKeepTheLastOne() {
        QTemporaryDir dir;
        writeFile(dir.path() + "/tokenizer.json",
                  R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3,
                      "bc": 4, "a": 5}, "merges": ["a b", "b c", "a b"]}})");
        const auto tokenizer = Tokenizer::load(dir.path().toStdString());
        QCOMPARE(tokenizer->encode("a").ids, std::vector<int>{5});
        QCOMPARE(tokenizer->tokenString(0), std::string());
        QCOMPARE(tokenizer->tokenString(5), std::string("a"));
        QCOMPARE(tokenizer->encode("abc").ids, (std::vector<int>{5, 4}));
    }

    // --- errors ---

    void invalidUtf8IsRejected() {
        QCOMPARE(encodeError(*load("gpt2"), "ok\xC3\x28"),
                 QString("text is not valid UTF-8 (bad byte sequence at byte 2)"));
        QCOMPARE(encodeError(*load("bert_uncased"), "\xED\xA0\x80"),
                 QString("text is not valid UTF-8 (bad byte sequence at byte 0)"));
    }

    void missingFilesAreNamed() {
        QTemporaryDir dir;
        QCOMPARE(loadError(dir.path() + "/absent"), dir.path() + "/absent: no such folder");
        QCOMPARE(
            loadError(dir.path()),
            dir.path() +
                ": no tokenizer files (tokenizer.json, vocab.txt, or vocab.json + merges.txt)");
        writeFile(dir.path() + "/vocab.json", "{}");
        QCOMPARE(
            loadError(dir.path()),
            dir.path() +
                ": no tokenizer files (tokenizer.json, vocab.txt, or vocab.json + merges.txt)");
    }

    void malformedJsonNamesFileAndLine() {
        QTemporaryDir dir;
        writeFile(dir.path() + "/tokenizer.json", "{\n  \"model\": {\n    \"type\": \"BPE\",,\n}");
        QCOMPARE(loadError(dir.path()),
                 dir.path() +
                     "/tokenizer.json: invalid JSON at line 3, column 20 (unterminated object)");
    }

    void unsupportedComponentsAreNamed() {
        QTemporaryDir dir;
        writeFile(dir.path() + "/tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
        QCOMPARE(loadError(dir.path()),
                 dir.path() + "/tokenizer.json: model: unsupported model 'Unigram'");
        writeFile(
            dir.path() + "/tokenizer.json",
            R"({"normalizer": {"type": "Precompiled"}, "model": {"type": "WordPiece", "vocab": {}}})");
        QCOMPARE(loadError(dir.path()),
                 dir.path() + "/tokenizer.json: normalizer: unsupported normalizer 'Precompiled'");
    }

    void malformedMergesAreNamed() {
        QTemporaryDir dir;
        writeFile(dir.path() + "/vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
        writeFile(dir.path() + "/merges.txt", "#version: 0.2\na b\nab\n");
        QCOMPARE(loadError(dir.path()),
                 dir.path() + "/merges.txt line 3: expected two tokens separated by a space");
        writeFile(dir.path() + "/merges.txt", "a b\nb c\n");
        QCOMPARE(loadError(dir.path()),
                 dir.path() +
                     "/merges.txt: merge 2 ('b c') uses 'c', which is not in the vocabulary");
        writeFile(dir.path() + "/vocab.json", R"({"a": 0, "b": "one"})");
        QCOMPARE(loadError(dir.path()),
                 dir.path() + "/vocab.json: the id of 'b' is not a non-negative integer");
    }

    void malformedVocabTxtIsNamed() {
        QTemporaryDir dir;
        writeFile(dir.path() + "/vocab.txt", "[CLS]\n[SEP]\nbad\xFF\n");
        QCOMPARE(loadError(dir.path()), dir.path() + "/vocab.txt line 3: not valid UTF-8");
        writeFile(dir.path() + "/vocab.txt", "[UNK]\n[SEP]\n");
        QCOMPARE(loadError(dir.path()),
                 dir.path() + "/vocab.txt: the special token '[CLS]' is not in the vocabulary");
    }

    void oversizedFilesAreRefusedUnread() {
        QTemporaryDir dir;
        QFile file(dir.path() + "/tokenizer.json");
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.resize((256LL << 20) + 1)); // sparse: nothing is written
        file.close();
        QCOMPARE(loadError(dir.path()),
                 dir.path() +
                     "/tokenizer.json: larger than 256 MiB, too large for a tokenizer file");
    }

    // --- tokenizations of tools/golden/tokenizers_ref.py (tests/data/models/*/golden.json) ---

    void matchesReferenceTokenizerGoldenFiles() {
        const QDir models(HEADLIGHT_TEST_DATA "/models");
        const QStringList names = models.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        int checked = 0;
        for (const QString& name : names) {
            QFile file(models.filePath(name + "/golden.json"));
            if (!file.open(QIODevice::ReadOnly)) continue;
            const QString problem = checkGoldenFile(models.filePath(name), file.readAll(), checked);
            if (!problem.isEmpty()) QFAIL(qPrintable(name + ": " + problem));
        }
        if (checked == 0)
            QFAIL("no golden.json with text cases under " HEADLIGHT_TEST_DATA "/models/*/");
    }

    // --- `headlight tokenize` ---

    void cliPrintsOneLinePerToken() {
        const CliRun run = runCli({"--model", kData + "bert_uncased", "--text", "Hello, World!"});
        QCOMPARE(run.err, QString());
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(
            run.out,
            QString("2\t[CLS]\t0-0\n21\thello\t0-5\n12\t,\t5-6\n22\tworld\t7-12\n14\t!\t12-13\n"
                    "3\t[SEP]\t0-0\n"));
    }

    void cliPrintsJson() {
        const CliRun run = runCli(
            {"--model", kData + "roberta", "--text", "Hello", "--text-pair", "world", "--json"});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(json.value("ids").toArray(), (QJsonArray{0, 274, 2, 2, 90, 276, 278, 2}));
        QCOMPARE(json.value("tokens").toArray(),
                 (QJsonArray{"<s>", "Hello", "</s>", "</s>", "w", "or", "ld", "</s>"}));
        QCOMPARE(json.value("type_ids").toArray(), (QJsonArray{0, 0, 0, 0, 0, 0, 0, 0}));
        QCOMPARE(json.value("offsets").toArray().at(1).toArray(), (QJsonArray{0, 5}));
        QCOMPARE(json.value("offsets").toArray().at(5).toArray(), (QJsonArray{1, 3}));
        QCOMPARE(json.value("kind").toString(), QString("byte-level-bpe"));
    }

    void cliCanLeaveOutSpecialTokens() {
        const CliRun run =
            runCli({"--model", kData + "bert_uncased", "--text", "hello", "--no-special-tokens"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, QString("21\thello\t0-5\n"));
    }

    void cliReportsAMissingFolder() {
        const CliRun run = runCli({"--model", "/nonexistent/headlight-model", "--text", "hi"});
        QVERIFY(run.exitCode != 0);
        QCOMPARE(run.out, QString());
        QCOMPARE(run.err,
                 QString("headlight tokenize: /nonexistent/headlight-model: no such folder\n"));
        const CliRun noModel = runCli({"--text", "hi"});
        QVERIFY(noModel.exitCode != 0);
        QCOMPARE(noModel.err.section('\n', 0, 0),
                 QString("headlight tokenize: --model is required"));
        QVERIFY2(noModel.err.section('\n', 1).startsWith("usage: headlight tokenize --model DIR"),
                 qPrintable(noModel.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestTokenizers)
#include "test_tokenizers.moc"
