// `headlight export --view atlas` as a user runs it: on the Mistral and Llama goldens (the
// float64 NumPy reference of tools/golden/models_ref.py, from Hugging Face's semantics) a short
// text's atlas is drawn at one token a tile, so its numbers (the .safetensors export) must be the
// golden's attention weights of the head, or of the layer's mean, within the golden tolerance;
// --text-file reads the text whole; the region's cells are the golden's block; and bad requests get
// one line and no file.
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "golden.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <QFile>
#include <QTest>
#include <sys/resource.h>

using namespace headlight;

namespace {

test::GoldenCase punctuationCase(const QString& model) {
    for (const test::GoldenCase& golden : test::goldenCases())
        if (golden.model == model && golden.name() == "punctuation") return golden;
    return {};
}

// [T, T] of the golden's attentions [L, H, T, T] at (layer, head), or the heads' mean (head -1),
// restricted to queries [q0, q1) × keys [k0, k1).
std::vector<float> goldenBlock(const Tensor& attentions, int layer, int head, int q0, int q1,
                               int k0, int k1) {
    const int64_t heads = attentions.dim(1), t = attentions.dim(2);
    std::vector<float> block;
    for (int q = q0; q < q1; ++q)
        for (int k = k0; k < k1; ++k) {
            double sum = 0.0;
            for (int64_t h = 0; h < heads; ++h)
                if (head < 0 || h == head)
                    sum += attentions.data()[((layer * heads + h) * t + q) * t + k];
            block.push_back(float(head < 0 ? sum / double(heads) : sum));
        }
    return block;
}
} // namespace

class TestAtlasCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void exactCellsAreTheGoldenWeights_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("head");
        QTest::addColumn<QString>("region");
        QTest::newRow("mistral head 1") << "mistral"
                                        << "1"
                                        << "";
        QTest::newRow("mistral mean") << "mistral"
                                      << "mean"
                                      << "";
        QTest::newRow("llama head 3, a region") << "llama"
                                                << "3"
                                                << "4:12,1:9";
    }

    void exactCellsAreTheGoldenWeights() {
        QFETCH(QString, model);
        QFETCH(QString, head);
        QFETCH(QString, region);
        const test::GoldenCase golden = punctuationCase(model);
        QVERIFY2(!golden.model.isEmpty(), "no punctuation case");
        test::ScratchDir dir;
        const QString text = dir.filePath("text.txt");
        test::writeFile(text, golden.json["text"].toString().toUtf8());
        const QString out = dir.filePath("atlas.safetensors");
        QStringList args{"export",      "--model", golden.folder, "--backend", "cpu",
                         "--text-file", text,      "--view",      "atlas",     "--layer",
                         "1",           "--head",  head,          "--out",     out};
        if (!region.isEmpty()) args << "--region" << region;
        const test::CliResult run = test::runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));

        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        const Tensor attentions = expected.loadF32("attentions");
        const int t = int(attentions.dim(2));
        int q0 = 0, q1 = t, k0 = 0, k1 = t;
        if (!region.isEmpty()) std::tie(q0, q1, k0, k1) = std::make_tuple(4, 12, 1, 9);
        const Tensor ours = io::SafetensorsFile(out.toStdString()).loadF32("values");
        QCOMPARE(ours.shape(), (std::vector<int64_t>{q1 - q0, k1 - k0}));
        const auto block =
            goldenBlock(attentions, 1, head == "mean" ? -1 : head.toInt(), q0, q1, k0, k1);
        QVERIFY(test::maxAbsDiff(block, ours.values()) <= test::kGoldenTolerance);
    }

    void badRequestsGetOneLineAndNoFile_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("reason");
        QTest::newRow("region syntax") << QStringList{"--region", "5:1"}
                                       << "--region must be Q0:Q1,K0:K1 (token positions, end "
                                          "excluded, e.g. 0:512,0:512), not '5:1'";
        QTest::newRow("region past the text")
            << QStringList{"--region", "0:400,0:4"}
            << "--region 0:400,0:4 goes past the text's 16 tokens";
        QTest::newRow("pooling") << QStringList{"--pool", "median"}
                                 << "--pool must be mean or max, not 'median'";
        QTest::newRow("head") << QStringList{"--head", "9"}
                              << "--head must be an integer from 0 to 3, not '9'";
    }

    void badRequestsGetOneLineAndNoFile() {
        QFETCH(QStringList, extra);
        QFETCH(QString, reason);
        const test::GoldenCase golden = punctuationCase("mistral");
        test::ScratchDir dir;
        const QString out = dir.filePath("atlas.png");
        const test::CliResult run = test::runHeadlight(
            QStringList{"export", "--model", golden.folder, "--backend", "cpu", "--text",
                        golden.json["text"].toString(), "--view", "atlas", "--out", out} +
            extra);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(test::refusalReason(run, "export").trimmed(), "headlight export: " + reason);
        QVERIFY(!QFile::exists(out));
    }

    // At T = 8,192 one head's map alone is 256 MiB. The atlas process for 8,192 tokens grows by
    // less than that over the same command on 1,024 tokens, so no T × T matrix was ever held.
    // (Growth, not the peak itself: AddressSanitizer's shadow memory adds a constant; its
    // quarantine of freed blocks is kept small here for the same reason.)
    void aLongTextNeverHoldsTheMap() {
        test::ScratchDir dir;
        QByteArray text;
        const QByteArray words[] = {"attention ", "reads ", "every ", "token ", "before ", "it "};
        for (int i = 0; text.size() < 8192; ++i)
            text += words[(i * 7 + i / 3) % 6];
        const QByteArray asan = qgetenv("ASAN_OPTIONS");
        qputenv("ASAN_OPTIONS", asan + (asan.isEmpty() ? "" : ":") + "quarantine_size_mb=1");
        const auto peakAfterAtlasOf = [&](int tokens, const QString& out) {
            const QString file = dir.filePath(QString("text%1.txt").arg(tokens));
            test::writeFile(file, text.left(tokens));
            const test::CliResult run = test::runHeadlight(
                {"export", "--model", HEADLIGHT_SOURCE_DIR "/resources/models/rope", "--backend",
                 "cpu", "--text-file", file, "--view", "atlas", "--layer", "1", "--head", "mean",
                 "--out", out});
            rusage children{};
            getrusage(RUSAGE_CHILDREN, &children);
            return std::make_pair(run, double(children.ru_maxrss) * 1024.0);
        };
        const auto [shortRun, shortPeak] = peakAfterAtlasOf(1024, dir.filePath("short.csv"));
        const QString out = dir.filePath("atlas.csv");
        const auto [longRun, longPeak] = peakAfterAtlasOf(8192, out);
        qputenv("ASAN_OPTIONS", asan);
        QVERIFY2(shortRun.exitCode == 0, qPrintable(shortRun.err));
        QVERIFY2(longRun.exitCode == 0, qPrintable(longRun.err));
        QVERIFY2(longRun.err.contains("8192 tokens"), qPrintable(longRun.err));
        QVERIFY2(longPeak - shortPeak < 8192.0 * 8192.0 * 4.0,
                 qPrintable(QString("peak RSS %1 MiB at 1,024 tokens, %2 MiB at 8,192")
                                .arg(shortPeak / 1048576.0)
                                .arg(longPeak / 1048576.0)));
        // 8,192 tokens in 32-token tiles: a header and 256 rows of 256 tiles each.
        const QList<QByteArray> rows =
            render::csvWithoutComments(test::readFile(out)).trimmed().split('\n');
        QCOMPARE(rows.size(), 1 + 256);
        QCOMPARE(rows.last().count(','), 256);
    }

    // `headlight reproduce` re-runs an atlas figure's command and finds it identical; an edited
    // variant file changes the scenario the command describes, and reproduce says so.
    void reproduceRedrawsAnAtlasFigure() {
        const test::GoldenCase golden = punctuationCase("mistral");
        test::ScratchDir dir;
        const QString variant = dir.filePath("window.json");
        test::writeFile(variant, R"({"mask": {"preset": "longformer", "window": 2}})");
        for (const char* name : {"atlas.png", "atlas.csv"}) {
            const QString out = dir.filePath(name);
            const test::CliResult made = test::runHeadlight(
                {"export", "--model", golden.folder, "--backend", "cpu", "--text",
                 golden.json["text"].toString(), "--view", "atlas", "--layer", "1", "--head",
                 "mean", "--variant", variant, "--out", out});
            QVERIFY2(made.exitCode == 0, qPrintable(made.err));
            const test::CliResult again = test::runHeadlight({"reproduce", out});
            QVERIFY2(again.exitCode == 0, qPrintable(again.err));
            QCOMPARE(again.out.trimmed(), QStringLiteral("identical: ") + out);
        }
        test::writeFile(variant, R"({"mask": {"preset": "longformer", "window": 3}})");
        const test::CliResult edited = test::runHeadlight({"reproduce", dir.filePath("atlas.png")});
        QCOMPARE(edited.exitCode, 1);
        QVERIFY2(edited.err.contains("the command now describes another scenario"),
                 qPrintable(edited.err));
    }

    void otherViewsRefuseAtlasOptions() {
        const test::GoldenCase golden = punctuationCase("mistral");
        test::ScratchDir dir;
        const test::CliResult run =
            test::runHeadlight({"export", "--model", golden.folder, "--text", "x", "--view",
                                "heatmap", "--region", "0:1,0:1", "--out", dir.filePath("h.png")});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith("headlight export: --region is for --view atlas"),
                 qPrintable(run.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestAtlasCli)
#include "test_atlas_cli.moc"
