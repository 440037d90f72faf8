// Hostile checkpoint folders, each made from a valid golden model and corrupted one way, run
// through `headlight inspect` as a user would run a folder downloaded from a stranger. Every one
// must be refused with exit code 1 and exactly one line on stderr that says what is wrong: no
// crash, no hang, no forward pass on bad weights. The folders are generated in a temporary
// directory from the corpus in tests/support/hostile_corpus.h, so the repository holds no binary
// hostile files.
#include "cli_runner.h"
#include "golden.h"
#include "hostile_corpus.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <limits>

using namespace headlight;

class TestHostileCheckpoints : public QObject {
    Q_OBJECT
    QTemporaryDir root_;

private Q_SLOTS:
    void refusedWithOneLine_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::hostileCases();
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i].name) << int(i);
    }

    void refusedWithOneLine() {
        QFETCH(int, index);
        const test::HostileCase hostile = test::hostileCases()[std::size_t(index)];
        const QDir folder(root_.filePath(QString::number(index)));
        QVERIFY(QDir().mkpath(folder.path()));
        test::copyGolden(hostile.model, folder);
        hostile.corrupt(folder);

        const auto run = test::runHeadlight(
            QStringList{"inspect", "--model", folder.path(), "--json"} + hostile.input, 60000);
        QVERIFY2(run.exitCode == 1, qPrintable(QString("exit code %1 (-1: crashed or hung); "
                                                       "stderr: %2")
                                                   .arg(run.exitCode)
                                                   .arg(run.err)));
        QVERIFY2(run.out.isEmpty(), qPrintable("stdout: " + run.out));
        QVERIFY2(run.err.count('\n') == 1 && run.err.endsWith('\n'),
                 qPrintable("not one line: " + run.err));
        QVERIFY2(run.err.startsWith("headlight inspect: "), qPrintable(run.err));
        qsizetype at = 0;
        for (const QString& piece : hostile.expected) {
            const qsizetype found = run.err.indexOf(piece, at);
            QVERIFY2(found >= 0, qPrintable("expected '" + piece + "' in: " + run.err));
            at = found + piece.size();
        }
    }

    // A tokenizer.json may allow WordPiece words of any length; matching was cubic in a word's
    // length, so one 20,000-character word took hours. It must now take well under a second.
    void longWordWithUnboundedWordPieceDoesNotHang() {
        const QDir folder(root_.filePath("long-word"));
        QVERIFY(QDir().mkpath(folder.path()));
        const QString source = QStringLiteral(HEADLIGHT_TEST_DATA "/tokenizers/wordpiece_json");
        QVERIFY(QFile::copy(source + "/tokenizer.json", folder.filePath("tokenizer.json")));
        test::onJson("tokenizer.json", [](QJsonObject& tokenizer) {
            QJsonObject model = tokenizer["model"].toObject();
            model["max_input_chars_per_word"] = std::numeric_limits<int>::max(); // "a", "##a" exist
            tokenizer["model"] = model;
        })(folder);
        const auto run = test::runHeadlight(
            {"tokenize", "--model", folder.path(), "--text", QString(20000, 'a')}, 20000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QCOMPARE(run.out.count('\n'), 20002); // [CLS], a, 19,999 × ##a, [SEP]
    }

    // The goldens themselves pass, so every refusal above is the corruption's doing.
    void untouchedGoldensRun() {
        for (const char* model : {"bert", "gpt2", "gpt2_plain", "llama"}) {
            const QDir folder(root_.filePath(QString("clean-") + model));
            QVERIFY(QDir().mkpath(folder.path()));
            test::copyGolden(model, folder);
            const auto run = test::runHeadlight(
                {"inspect", "--model", folder.path(), "--json", "--text", "hello"}, 60000);
            QVERIFY2(run.exitCode == 0, qPrintable(QString(model) + ": " + run.err));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestHostileCheckpoints)
#include "test_hostile_checkpoints.moc"
