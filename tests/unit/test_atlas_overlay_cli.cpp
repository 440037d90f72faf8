// `headlight export --view atlas --overlay mask` as a user runs it on the zoo's RoPE model
// (causal): with a Longformer variant (band 2, global token 0) the CSV gives per cell the kernel's
// weight, the share of the cell the mask allows (checked against the band's formula here) and the
// mass outside it (none: the kernel puts no weight there), and the comment line the region's share;
// the SVG draws the outline over the cells and names the share in the title; without a variant
// the mask is the causal rule.
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "temp_files.h"

#include <QFile>
#include <QTest>

using namespace headlight;

namespace {

const QString kOverlayText = QStringLiteral(
    "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat.");

bool longformerBandAllows(int64_t i, int64_t j) {
    return j <= i && (i - j <= 2 || i == 0 || j == 0);
}

test::CliResult exportOverlaidAtlas(const QString& out, const QStringList& extra,
                                    const QString& overlay = QStringLiteral("mask")) {
    return test::runHeadlight(
        QStringList{"export", "--model", HEADLIGHT_SOURCE_DIR "/resources/models/rope", "--backend",
                    "cpu", "--text", kOverlayText, "--view", "atlas", "--layer", "1", "--head", "2",
                    "--overlay", overlay, "--out", out} +
        extra);
}
} // namespace

class TestAtlasOverlayCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void csvGivesTheMaskPerCell_data() {
        QTest::addColumn<bool>("longformer");
        QTest::newRow("longformer") << true;
        QTest::newRow("causal rule") << false;
    }

    void csvGivesTheMaskPerCell() {
        QFETCH(bool, longformer);
        test::ScratchDir dir;
        const QString variant = dir.filePath("longformer.json");
        test::writeFile(variant,
                        R"({"mask": {"preset": "longformer", "window": 2, "global": [0]}})");
        const QString out = dir.filePath("atlas.csv");
        const test::CliResult run = exportOverlaidAtlas(
            out, longformer ? QStringList{"--variant", variant} : QStringList{});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QByteArray bytes = test::readFile(out);
        // The kernel (or the causal rule) puts no weight outside: zero, or a masked score's
        // exp underflowing to a denormal in builds without fast vector exp.
        const qsizetype share = bytes.indexOf(" of the attention lies outside the mask");
        QVERIFY(share > 0);
        const qsizetype start = bytes.lastIndexOf(' ', share - 1) + 1;
        QVERIFY2(bytes.mid(start, share - start).toDouble() <= 1e-30,
                 bytes.mid(start, share - start).constData());
        const QList<QByteArray> lines = render::csvWithoutComments(bytes).trimmed().split('\n');
        QCOMPARE(lines.first().trimmed(),
                 QByteArray("query,key,weight,allowed share,mass,mass outside mask"));
        int64_t tokens = 0;
        for (const QByteArray& line : lines.mid(1))
            tokens = std::max<int64_t>(tokens, line.split(',').first().toLongLong() + 1);
        QVERIFY(tokens > 10);
        QCOMPARE(lines.size(), 1 + tokens * tokens); // one token a tile
        for (const QByteArray& line : lines.mid(1)) {
            const QList<QByteArray> f = line.trimmed().split(',');
            const int64_t i = f[0].toLongLong(), j = f[1].toLongLong();
            const bool allowed = longformer ? longformerBandAllows(i, j) : j <= i;
            QCOMPARE(f[3].toDouble(), allowed ? 1.0 : 0.0);
            // A one-token tile's mass is its weight (recomputed: equal within float rounding).
            QVERIFY(std::abs(f[4].toDouble() - f[2].toDouble()) <= 1e-6);
            QCOMPARE(f[5].toDouble(), 0.0);
            if (!allowed) QCOMPARE(f[2].toDouble(), 0.0);
        }
    }

    void svgDrawsTheOutline() {
        test::ScratchDir dir;
        const QString out = dir.filePath("atlas.svg");
        const test::CliResult run = exportOverlaidAtlas(out, {});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QByteArray svg = test::readFile(out);
        QVERIFY(svg.contains("mass outside the mask 0.00%"));
        QVERIFY(svg.contains("stroke=\"#ff5aaa\""));
    }

    void refusesAnUnknownOverlay() {
        test::ScratchDir dir;
        const QString out = dir.filePath("atlas.png");
        const test::CliResult run = exportOverlaidAtlas(out, {}, "band");
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("--overlay must be mask, not 'band'"), qPrintable(run.err));
        QVERIFY(!QFile::exists(out));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestAtlasOverlayCli)
#include "test_atlas_overlay_cli.moc"
