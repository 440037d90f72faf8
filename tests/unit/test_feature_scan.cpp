// A corpus scan of SAE features (`headlight features --scan`) and Neuronpedia labels, on the zoo
// model pre_ln with its SAE. The scan's firing counts and top contexts equal those found by
// sorting every activation of `headlight features --dump` (whose values test_features_cli checks
// against PyTorch) over the same texts; shards merged by `headlight merge` equal the whole scan;
// a context shows the text around its token; damaged scan files and merges of the wrong shards
// are refused in one line. Labels are read from files laid out as Neuronpedia's export writes
// them (tools/golden/make_neuronpedia_labels.py): batches in natural order, concatenated gzip
// members, and each hostile file refused with its reason.
#include "cli_runner.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <tuple>

using namespace headlight;
using headlight::test::runHeadlight;

namespace {

const QString kScanModel = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/pre_ln");
const QString kScanSae = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/saes/pre_ln");
const QString kLabels = QStringLiteral(HEADLIGHT_TEST_DATA "/neuronpedia/");
constexpr int kScanContexts = 3;

const QStringList kScanTexts = {
    QStringLiteral("In 1984 the bug was 42."),
    QStringLiteral("hacker: n. A person who enjoys exploring the details of systems."),
    QStringLiteral("The 386 and the 68000 ran at 16 MHz in 1987."),
    QStringLiteral("foo: a sample name for absolutely anything."),
    QStringLiteral("RTFM: Read The Fine Manual, said in 1979 and since."),
    QStringLiteral("kludge: a clever programming trick intended to solve a problem.")};

struct ScanCandidate {
    float activation;
    int64_t text;
    int64_t position;
};

// Every token's features, as `headlight features --dump` writes them: [T, d_sae] per text.
std::vector<Tensor> scanDumpedFeatures(const QTemporaryDir& dir) {
    std::vector<Tensor> dumps;
    for (int i = 0; i < kScanTexts.size(); ++i) {
        const QString dump = dir.filePath(QStringLiteral("dump%1.safetensors").arg(i));
        const test::CliResult run =
            runHeadlight({"features", "--model", kScanModel, "--sae", kScanSae, "--text",
                          kScanTexts[i], "--backend", "cpu", "--dump", dump});
        if (run.exitCode != 0) qFatal("features --dump failed: %s", qPrintable(run.err));
        dumps.push_back(io::SafetensorsFile(dump.toStdString()).loadF32("feature_acts"));
    }
    return dumps;
}

QString scanCorpusFile(const QTemporaryDir& dir) {
    const QString path = dir.filePath("corpus.txt");
    test::writeFile(path, kScanTexts.join('\n').toUtf8() + "\n");
    return path;
}

bool sameScans(const app::FeatureScan& a, const app::FeatureScan& b) {
    if (a.texts != b.texts || a.tokens != b.tokens || a.fired != b.fired ||
        a.top.size() != b.top.size())
        return false;
    for (std::size_t f = 0; f < a.top.size(); ++f) {
        if (a.top[f].size() != b.top[f].size()) return false;
        for (std::size_t i = 0; i < a.top[f].size(); ++i) {
            const app::FeatureContext &x = a.top[f][i], &y = b.top[f][i];
            if (x.text != y.text || x.position != y.position || x.activation != y.activation ||
                x.before != y.before || x.token != y.token || x.after != y.after)
                return false;
        }
    }
    return true;
}

QString labelsError(const QString& path) {
    try {
        app::readFeatureLabels(path);
    } catch (const app::FeatureLabelsError& refused) {
        return QString::fromUtf8(refused.what());
    }
    return {};
}
} // namespace

class TestFeatureScan : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    app::FeatureScan scan(const QStringList& extra, const QString& out) {
        QStringList args{"features",
                         "--model",
                         kScanModel,
                         "--sae",
                         kScanSae,
                         "--scan",
                         scanCorpusFile(dir_),
                         "--contexts",
                         QString::number(kScanContexts),
                         "--backend",
                         "cpu",
                         "--out",
                         out};
        const test::CliResult run = runHeadlight(args + extra);
        if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
        return app::readFeatureScan(out);
    }

private Q_SLOTS:
    void scanEqualsSortingEveryActivation() {
        const std::vector<Tensor> dumps = scanDumpedFeatures(dir_);
        const app::FeatureScan ours = scan({}, dir_.filePath("whole.json"));
        const int64_t width = dumps.front().dim(1);
        QCOMPARE(int64_t(ours.fired.size()), width);
        QCOMPARE(ours.texts, int64_t(kScanTexts.size()));
        int64_t tokens = 0;
        for (const Tensor& d : dumps)
            tokens += d.dim(0);
        QCOMPARE(ours.tokens, tokens);
        int compared = 0;
        for (int64_t f = 0; f < width; ++f) {
            std::vector<ScanCandidate> all;
            for (std::size_t text = 0; text < dumps.size(); ++text)
                for (int64_t t = 0; t < dumps[text].dim(0); ++t)
                    if (const float a = dumps[text].data()[t * width + f]; a > 0.0f)
                        all.push_back({a, int64_t(text), t});
            std::sort(all.begin(), all.end(), [](const ScanCandidate& a, const ScanCandidate& b) {
                return std::tie(b.activation, a.text, a.position) <
                       std::tie(a.activation, b.text, b.position);
            });
            QCOMPARE(ours.fired[std::size_t(f)], int64_t(all.size()));
            const auto& top = ours.top[std::size_t(f)];
            QCOMPARE(top.size(), std::min(all.size(), std::size_t(kScanContexts)));
            for (std::size_t i = 0; i < top.size(); ++i) {
                QCOMPARE(top[i].text, all[i].text);
                QCOMPARE(top[i].position, all[i].position);
                QVERIFY(std::abs(top[i].activation - all[i].activation) <= 1e-6f);
                ++compared;
            }
        }
        QVERIFY2(compared > 200, "too few contexts to compare");
    }

    // The digit feature's strongest context in the first text is its "9" (position 4), shown
    // with the text before and after it.
    void aContextShowsTheTextAroundItsToken() {
        const app::FeatureScan ours = scan({}, dir_.filePath("contexts.json"));
        const auto& digits = ours.top.at(116);
        const auto found = std::find_if(digits.begin(), digits.end(), [](const auto& c) {
            return c.text == 0 && c.position == 4;
        });
        QVERIFY(found != digits.end());
        QCOMPARE(found->before, QStringLiteral("In 1"));
        QCOMPARE(found->token, QStringLiteral("9"));
        QCOMPARE(found->after, QStringLiteral("84 the"));
        QCOMPARE(ours.settings["corpus"].toString(), QStringLiteral("corpus.txt"));
        QCOMPARE(ours.settings["hook"].toString(), QStringLiteral("blocks.1.hook_resid_post"));
    }

    void shardsMergeIntoTheWholeScan() {
        const app::FeatureScan whole = scan({}, dir_.filePath("whole.json"));
        QStringList shards;
        for (int i = 0; i < 3; ++i) {
            shards << dir_.filePath(QStringLiteral("shard%1.json").arg(i));
            const app::FeatureScan part =
                scan({"--shard", QStringLiteral("%1/3").arg(i)}, shards.back());
            QCOMPARE(part.texts, int64_t(2));
        }
        const QString merged = dir_.filePath("merged.json");
        test::CliResult run =
            runHeadlight(QStringList{"merge"} + shards + QStringList{"--out", merged});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(sameScans(app::readFeatureScan(merged),
                          app::readFeatureScan(dir_.filePath("whole.json"))));
        QVERIFY(sameScans(app::readFeatureScan(merged), whole));

        run = runHeadlight({"merge", shards[0], shards[2], "--out", merged});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("2 of 3 shards given"), qPrintable(run.err));
        run = runHeadlight({"merge", shards[0], shards[0], shards[1], "--out", merged});
        QVERIFY2(run.exitCode == 1 && run.err.contains("given twice"), qPrintable(run.err));
        run = runHeadlight({"merge", shards[0], dir_.filePath("whole.json"), "--out", merged});
        QVERIFY2(run.exitCode == 1 && run.err.contains("settings differ"), qPrintable(run.err));
    }

    void damagedScanFilesAreRefused_data() {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("replacement");
        QTest::addColumn<QString>("reason");
        QTest::newRow("truncated") << "\"top\":"
                                   << "\"top\""
                                   << "JSON error";
        QTest::newRow("version") << "\"headlight.feature_scan\":1"
                                 << "\"headlight.feature_scan\":7"
                                 << "no \"headlight.feature_scan\"";
        QTest::newRow("fired") << "\"fired\":\\["
                               << "\"fired\":[1,"
                               << "counts 513 features";
        QTest::newRow("feature") << "\"top\":\\{\""
                                 << "\"top\":{\"99999"
                                 << "is not one of the SAE's 512";
        QTest::newRow("feature spelt twice") << "\"top\":\\{\"(\\d+)\""
                                             << "\"top\":{\"0\\1\""
                                             << "is not one of the SAE's 512";
        QTest::newRow("activation") << "(\"top\":\\{\"\\d+\":\\[\\[\\d+,\\d+,)[^,]+,"
                                    << "\\1-1,"
                                    << "not a positive number";
    }
    void damagedScanFilesAreRefused() {
        QFETCH(QString, pattern);
        QFETCH(QString, replacement);
        QFETCH(QString, reason);
        const QString good = dir_.filePath("good.json");
        scan({}, good);
        QString text = QString::fromUtf8(test::readFile(good));
        const QRegularExpression first(pattern);
        const QRegularExpressionMatch match = first.match(text);
        QVERIFY2(match.hasMatch(), qPrintable(pattern));
        text.replace(match.capturedStart(), match.capturedLength(),
                     match.captured().replace(first, replacement));
        const QString bad = dir_.filePath("bad.json");
        test::writeFile(bad, text.toUtf8());
        try {
            app::readFeatureScan(bad);
            QFAIL("a damaged scan was read");
        } catch (const app::FeatureScanError& refused) {
            const QString message = QString::fromUtf8(refused.what());
            QVERIFY2(message.startsWith("bad.json is not a feature scan") &&
                         message.contains(reason) && !message.contains('\n'),
                     qPrintable(message));
        }
    }

    // Batch 2 before batch 10 (natural order), the first explanation kept, and the two gzip
    // members of batch 1 both read.
    void labelsFollowTheExportsBatchOrder() {
        const app::FeatureLabels labels =
            app::readFeatureLabels(kLabels + "pre_ln-res/explanations");
        QCOMPARE(labels.source, QStringLiteral("headlight-pre_ln/1-res-zoo"));
        QCOMPARE(labels.explanations, 7);
        QCOMPARE(labels.of(5), QStringLiteral("explained in batch 2"));
        QCOMPARE(labels.of(116), QStringLiteral("digits in years and numbers"));
        QCOMPARE(labels.of(17), QStringLiteral("spaces between words"));
        QCOMPARE(labels.of(300), QStringLiteral("capital letters"));
        QVERIFY(labels.of(1).isEmpty());
        // The release folder above explanations/ reads the same.
        QCOMPARE(app::readFeatureLabels(kLabels + "pre_ln-res").descriptions, labels.descriptions);
        QCOMPARE(
            app::readFeatureLabels(kLabels + "pre_ln-res/explanations/batch-10.jsonl.gz").of(5),
            QStringLiteral("explained in batch 10"));
    }

    void hostileLabelFilesAreRefused_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        QTest::newRow("truncated") << "truncated.jsonl.gz"
                                   << "the gzip stream is truncated";
        QTest::newRow("not gzip") << "not-gzip.jsonl.gz"
                                  << "it is not gzip data";
        QTest::newRow("bad line") << "bad-line.jsonl.gz"
                                  << "line 2 is not an explanation";
        QTest::newRow("two sources") << "two-sources.jsonl.gz"
                                     << "line 2 explains headlight-pre_ln/2-res-zoo";
        QTest::newRow("missing") << "absent.jsonl.gz"
                                 << "does not exist";
    }
    void hostileLabelFilesAreRefused() {
        QFETCH(QString, file);
        QFETCH(QString, reason);
        const QString message = labelsError(kLabels + file);
        QVERIFY2(message.contains(reason) && !message.contains('\n'), qPrintable(message));
    }

    // The CLI lists each feature with its description, and refuses --labels without --scan's
    // partner options mixed in.
    void theCliShowsLabelsAndRefusesMixedModes() {
        test::CliResult run =
            runHeadlight({"features", "--model", kScanModel, "--sae", kScanSae, "--text", "In 1984",
                          "--backend", "cpu", "--json", "--labels", kLabels + "pre_ln-res"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonArray tokens = QJsonDocument::fromJson(run.out.toUtf8())["tokens"].toArray();
        int digits = 0, labelled = 0;
        for (const QJsonValue& token : tokens)
            for (const QJsonValue& feature : token["features"].toArray())
                if (feature["id"].toInt() == 116) {
                    ++digits;
                    labelled += feature["label"].toString() == "digits in years and numbers";
                }
        QVERIFY(digits > 0 && labelled == digits);
        run = runHeadlight({"features", "--model", kScanModel, "--sae", kScanSae, "--scan",
                            scanCorpusFile(dir_), "--text", "x", "--out", dir_.filePath("x.json")});
        QVERIFY2(run.exitCode == 1 && run.err.contains("--text is not for --scan"),
                 qPrintable(run.err));
        run = runHeadlight({"features", "--model", kScanModel, "--sae", kScanSae, "--text", "x",
                            "--shard", "0/2"});
        QVERIFY2(run.exitCode == 1 && run.err.contains("--shard is for --scan"),
                 qPrintable(run.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFeatureScan)
#include "test_feature_scan.moc"
