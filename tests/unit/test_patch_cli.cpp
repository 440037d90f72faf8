// `headlight inspect --ablate` and `headlight patch` end to end: on the golden GPT-2 (its
// tokenizer files left out, so the texts are token ids) the printed KL per position is the KL of
// PyTorch's clean and ablated logits, and the patching CSV holds PyTorch's grid within 1e-4
// (tools/golden/make_intervention_goldens.py); the figure is a PNG; bad input gets one line.
#include "cli_runner.h"
#include "golden.h"
#include "golden_json.h"
#include "io/safetensors.h"

#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {

QJsonObject patchCliCase(const QString& name) {
    const QJsonObject golden =
        test::readJsonObject(QStringLiteral(HEADLIGHT_TEST_DATA "/interventions/golden.json"));
    for (const QJsonValue& c : golden["cases"].toArray())
        if (c["name"].toString() == name) return c.toObject();
    return {};
}

QString spacedIds(const QJsonValue& ids) {
    return test::joinedIds(ids, ' ');
}

io::SafetensorsFile interventionTensors(const QString& name) {
    return io::SafetensorsFile(
        (QStringLiteral(HEADLIGHT_TEST_DATA "/interventions/golden/") + name + ".safetensors")
            .toStdString());
}

// KL(p ‖ q) of two logit rows, in double.
double klOfLogitRows(const float* p, const float* q, int64_t vocab) {
    const auto logSumExp = [vocab](const float* x) {
        double top = x[0], sum = 0.0;
        for (int64_t v = 1; v < vocab; ++v)
            top = std::max(top, double(x[v]));
        for (int64_t v = 0; v < vocab; ++v)
            sum += std::exp(double(x[v]) - top);
        return top + std::log(sum);
    };
    const double lp = logSumExp(p), lq = logSumExp(q);
    double kl = 0.0;
    for (int64_t v = 0; v < vocab; ++v)
        kl += std::exp(double(p[v]) - lp) * ((double(p[v]) - lp) - (double(q[v]) - lq));
    return kl;
}
} // namespace

class TestPatchCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_; // the golden GPT-2 without its tokenizer: texts are token ids

private Q_SLOTS:
    void initTestCase() {
        model_ = dir_.filePath("gpt2_ids");
        QVERIFY(QDir().mkpath(model_));
        for (const char* file : {"config.json", "model.safetensors"})
            QVERIFY(QFile::copy(test::goldenRoot() + "/gpt2/" + file, model_ + "/" + file));
    }

    void ablateReportsPyTorchsKl() {
        const QJsonObject c = patchCliCase("gpt2_ablate_mean");
        QVERIFY(!c.isEmpty());
        QStringList heads;
        for (const QJsonValue& h : c["heads"].toArray())
            heads << QStringLiteral("%1.%2:%3")
                         .arg(h["layer"].toInt())
                         .arg(h["head"].toInt())
                         .arg(h["mode"].toString());
        QStringList ids;
        for (const QJsonValue& id : c["ids"].toArray())
            ids << QString::number(id.toInt());
        const auto run = test::runHeadlight({"inspect", "--model", test::goldenRoot() + "/gpt2",
                                             "--backend", "cpu", "--ids", ids.join(','), "--ablate",
                                             heads.join(','), "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject ablation =
            QJsonDocument::fromJson(run.out.toUtf8()).object()["ablation"].toObject();
        QCOMPARE(ablation["heads"].toString(), heads.join(','));
        const io::SafetensorsFile expected = interventionTensors("gpt2_ablate_mean");
        const Tensor clean = expected.loadF32("clean_logits"),
                     ablated = expected.loadF32("ablated_logits");
        const QJsonArray positions = ablation["positions"].toArray();
        QCOMPARE(positions.size(), qsizetype(clean.dim(0)));
        const int64_t vocab = clean.dim(1);
        for (int64_t t = 0; t < clean.dim(0); ++t) {
            const double kl =
                klOfLogitRows(clean.data() + t * vocab, ablated.data() + t * vocab, vocab);
            QVERIFY2(std::abs(positions[t]["kl"].toDouble() - kl) <= 1e-4,
                     qPrintable(QStringLiteral("position %1: %2 vs %3")
                                    .arg(t)
                                    .arg(positions[t]["kl"].toDouble())
                                    .arg(kl)));
        }

        const auto table = test::runHeadlight({"inspect", "--model", resourcesModel("rope"),
                                               "--text", "a3k7q1z9m4>k", "--ablate", "1.1"});
        QVERIFY2(table.exitCode == 0, qPrintable(table.err));
        QVERIFY(table.out.startsWith("ablated heads 1.1:zero\npos\ttoken\tKL(clean||ablated)"));
        QVERIFY(table.out.contains("\n11\tk\t"));
        QVERIFY(table.out.contains(" of 12 positions, mean top-5 flips "));
    }

    // mean-corpus over a corpus file and replace from another text: the KL per position of
    // PyTorch's clean and ablated logits.
    void ablateCorpusMeanAndReplace_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("mean-corpus") << "gpt2_ablate_mean_corpus";
        QTest::newRow("replace") << "gpt2_ablate_replace";
    }

    void ablateCorpusMeanAndReplace() {
        QFETCH(QString, name);
        const QJsonObject c = patchCliCase(name);
        QVERIFY(!c.isEmpty());
        QStringList heads;
        for (const QJsonValue& h : c["heads"].toArray())
            heads << QStringLiteral("%1.%2:%3")
                         .arg(h["layer"].toInt())
                         .arg(h["head"].toInt())
                         .arg(h["mode"].toString());
        QStringList args{"inspect",
                         "--model",
                         model_,
                         "--backend",
                         "cpu",
                         "--ids",
                         spacedIds(c["ids"]).replace(' ', ','),
                         "--ablate",
                         heads.join(','),
                         "--json"};
        if (c.contains("corpus")) {
            const QString corpus = dir_.filePath(name + ".txt");
            QFile file(corpus);
            QVERIFY(file.open(QIODevice::WriteOnly));
            for (const QJsonValue& ids : c["corpus"].toArray())
                file.write((spacedIds(ids) + "\n\n").toUtf8()); // blank lines are skipped
            file.close();
            args << "--ablation-corpus" << corpus;
        } else {
            args << "--replace-text" << spacedIds(c["source_ids"]);
        }
        const auto run = test::runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        if (c.contains("corpus"))
            QVERIFY2(run.err.contains("corpus head means 3/3 texts\n"), qPrintable(run.err));
        const QJsonArray positions = QJsonDocument::fromJson(run.out.toUtf8())
                                         .object()["ablation"]
                                         .toObject()["positions"]
                                         .toArray();
        const io::SafetensorsFile expected = interventionTensors(name);
        const Tensor clean = expected.loadF32("clean_logits"),
                     ablated = expected.loadF32("ablated_logits");
        QCOMPARE(positions.size(), qsizetype(clean.dim(0)));
        const int64_t vocab = clean.dim(1);
        double total = 0.0;
        for (int64_t t = 0; t < clean.dim(0); ++t) {
            const double kl =
                klOfLogitRows(clean.data() + t * vocab, ablated.data() + t * vocab, vocab);
            QVERIFY2(std::abs(positions[t]["kl"].toDouble() - kl) <= 1e-4,
                     qPrintable(QStringLiteral("position %1: %2 vs %3")
                                    .arg(t)
                                    .arg(positions[t]["kl"].toDouble())
                                    .arg(kl)));
            total += kl;
        }
        QVERIFY(total > 1e-3);
    }

    void ablateOptionsGetOneLine_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no corpus") << QStringList{"--ablate", "0.1:mean-corpus"}
                                   << "--ablate L.H:mean-corpus needs --ablation-corpus FILE";
        QTest::newRow("no source")
            << QStringList{"--ablate", "0.1:replace"}
            << "--ablate L.H:replace needs --replace-text (the text whose head outputs replace "
               "the ablated ones)";
        QTest::newRow("stray source") << QStringList{"--ablate", "0.1", "--replace-text", "1 2"}
                                      << "--replace-text is only read by --ablate L.H:replace";
        QTest::newRow("length") << QStringList{"--ablate", "0.1:replace", "--replace-text", "1"}
                                << "the source text has 1 tokens and the text 2; replace needs "
                                   "the same length";
        QTest::newRow("missing corpus")
            << QStringList{"--ablate", "0.1:mean-corpus", "--ablation-corpus", "/nonexistent/c.txt"}
            << "--ablation-corpus /nonexistent/c.txt: No such file or directory";
    }

    void ablateOptionsGetOneLine() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto run = test::runHeadlight(
            QStringList{"inspect", "--model", model_, "--backend", "cpu", "--ids", "1,2"} + args);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, "headlight inspect: " + message + "\n");
    }

    void patchWritesPyTorchsGrid_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("grid");
        QTest::newRow("positions")
            << "gpt2_patch_layers_positions" << QStringLiteral("layers×positions");
        QTest::newRow("heads") << "gpt2_patch_layers_heads" << QStringLiteral("layersxheads");
    }

    void patchWritesPyTorchsGrid() {
        QFETCH(QString, name);
        QFETCH(QString, grid);
        const QJsonObject c = patchCliCase(name);
        const QString csv = dir_.filePath(name + ".csv"), png = dir_.filePath(name + ".png");
        const auto run =
            test::runHeadlight({"patch", "--model", model_, "--backend", "cpu", "--clean",
                                spacedIds(c["clean_ids"]), "--corrupt", spacedIds(c["corrupt_ids"]),
                                "--target", QStringLiteral("#%1").arg(c["target"].toInt()),
                                "--grid", grid, "--out", csv, "--figure", png});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.err.contains(QStringLiteral("passes\n")));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
        const Tensor recovered = interventionTensors(name).loadF32("recovered");
        QCOMPARE(lines.size(), qsizetype(recovered.size()) + 1);
        QCOMPARE(lines.front(), grid.endsWith("heads")
                                    ? QStringLiteral("layer,head,recovered,logit_difference")
                                    : QStringLiteral("layer,position,recovered,logit_difference"));
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QStringList cells = lines[i].split(',');
            const int64_t at = cells[0].toLongLong() * recovered.dim(1) + cells[1].toLongLong();
            QVERIFY2(std::abs(cells[2].toDouble() - recovered.data()[at]) <= test::kGoldenTolerance,
                     qPrintable(lines[i]));
        }
        const QImage image(png);
        QVERIFY(image.width() > 800 && image.height() > 500);
    }

    void badInputGetsOneLine_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("lengths")
            << QStringList{"--clean",  "1 2 3", "--corrupt", "1 2",
                           "--target", "#4",    "--grid",    "layers×heads"}
            << "the clean text has 3 tokens and the corrupted text 2; patching "
               "needs the same length";
        QTest::newRow("grid") << QStringList{"--clean",  "1 2", "--corrupt", "1 3",
                                             "--target", "#4",  "--grid",    "heads"}
                              << "--grid: give layers×positions or layers×heads (or layersxheads)";
        QTest::newRow("vocabulary") << QStringList{"--clean",  "1 2",   "--corrupt", "1 3",
                                                   "--target", "#9999", "--grid",    "layers×heads"}
                                    << "token id 9999 is outside the vocabulary (668)";
        QTest::newRow("no tokenizer")
            << QStringList{"--clean",  "1 2", "--corrupt", "1 3",
                           "--target", "cat", "--grid",    "layers×heads"}
            << "--target: the checkpoint has no tokenizer; name the token by id as #ID";
    }

    void badInputGetsOneLine() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto run = test::runHeadlight(QStringList{"patch", "--model", model_, "--backend",
                                                        "cpu", "--out", dir_.filePath("bad.csv")} +
                                            args);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, "headlight patch: " + message + "\n");
        QVERIFY(!QFile::exists(dir_.filePath("bad.csv")));
        const auto ablate = test::runHeadlight(
            {"inspect", "--model", model_, "--ids", "1,2", "--ablate", "1:mean"});
        QCOMPARE(ablate.err,
                 QStringLiteral("headlight inspect: '1:mean' is not a head ablation: write "
                                "LAYER.HEAD or LAYER.HEAD:zero|mean|mean-corpus|replace (from "
                                "0), e.g. 0.3:mean\n"));
    }

private:
    static QString resourcesModel(const char* name) {
        return QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name;
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestPatchCli)
#include "test_patch_cli.moc"
