// `headlight inspect --dump` with --layers and --heads: the dump holds the chosen layers and heads
// in the order asked, equal to the same slices of a full dump, with their entropy, the JSD
// between consecutive chosen layers and the lists naming them; without selectors a dump past
// 256 MiB of maps is refused, before the pass, with the bytes it would write; stray selectors
// and layers that do not exist get one line.
#include "analysis/divergence.h"
#include "cli_runner.h"
#include "golden.h"
#include "io/safetensors.h"

#include <QTemporaryDir>
#include <QTest>

using namespace headlight;

namespace {

// [L, H, T, T] or [L, H, T] -> the (layer, head) block of its last two or one axes.
std::vector<float> headBlock(const Tensor& t, int64_t layer, int64_t head) {
    const int64_t heads = t.dim(1);
    int64_t block = 1;
    for (int axis = 2; axis < int(t.rank()); ++axis)
        block *= t.dim(axis);
    const auto first = t.values().begin() + (layer * heads + head) * block;
    return {first, first + block};
}
} // namespace

class TestInspectDumpSelection : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void selectedDumpEqualsSlicesOfTheFullDump() {
        const QString bert = test::goldenRoot() + "/bert";
        const QString full = dir_.filePath("full.safetensors"),
                      part = dir_.filePath("part.safetensors");
        const QStringList input{"--ids", "2,40,41,42,43,44,3", "--backend", "cpu"};
        auto run =
            test::runHeadlight(QStringList{"inspect", "--model", bert, "--dump", full} + input);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        run = test::runHeadlight(QStringList{"inspect", "--model", bert, "--dump", part, "--layers",
                                             "1,0", "--heads", "3,0"} +
                                 input);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));

        const io::SafetensorsFile whole(full.toStdString()), chosen(part.toStdString());
        QCOMPARE(chosen.loadI64("attention_layers"), (std::vector<int64_t>{1, 0}));
        QCOMPARE(chosen.loadI64("attention_heads"), (std::vector<int64_t>{3, 0}));
        QCOMPARE(chosen.loadI64("input_ids"), whole.loadI64("input_ids"));
        const Tensor attentions = chosen.loadF32("attentions");
        const Tensor entropy = chosen.loadF32("entropy");
        const Tensor fullAttentions = whole.loadF32("attentions");
        const Tensor fullEntropy = whole.loadF32("entropy");
        QCOMPARE(attentions.shape(), (std::vector<int64_t>{2, 2, 7, 7}));
        QCOMPARE(entropy.shape(), (std::vector<int64_t>{2, 2, 7}));
        const int layers[] = {1, 0}, heads[] = {3, 0};
        for (int64_t l = 0; l < 2; ++l)
            for (int64_t h = 0; h < 2; ++h) {
                QCOMPARE(headBlock(attentions, l, h),
                         headBlock(fullAttentions, layers[l], heads[h]));
                QCOMPARE(headBlock(entropy, l, h), headBlock(fullEntropy, layers[l], heads[h]));
            }
        // JSD between the first chosen layer (1) and the next chosen (0), head 3, query 4.
        const Tensor jsd = chosen.loadF32("jsd_adjacent");
        QCOMPARE(jsd.shape(), (std::vector<int64_t>{1, 2, 7}));
        const std::vector<float> p = headBlock(fullAttentions, 1, 3),
                                 q = headBlock(fullAttentions, 0, 3);
        const double expected =
            analysis::jensenShannonBits(std::span(p).subspan(28, 7), std::span(q).subspan(28, 7));
        QVERIFY(std::abs(jsd.values()[4] - expected) <= 1e-6);
        QCOMPARE(chosen.loadF32("last_hidden_state").shape(),
                 whole.loadF32("last_hidden_state").shape());
    }

    // The rope zoo model (2 layers, 4 heads) at 3,000 tokens: 2 · 4 · 3000² · 4 = 288,000,000
    // bytes.
    void largeDumpWithoutSelectorsIsRefused() {
        QStringList ids;
        for (int i = 0; i < 3000; ++i)
            ids << QString::number(5 + i % 200);
        const QString target = dir_.filePath("large.safetensors");
        const auto run =
            test::runHeadlight({"inspect", "--model", HEADLIGHT_SOURCE_DIR "/resources/models/rope",
                                "--ids", ids.join(','), "--backend", "cpu", "--dump", target});
        QVERIFY(run.exitCode != 0);
        const QString reason = test::refusalReason(run, "inspect").trimmed();
        QVERIFY2(reason.endsWith(
                     QString("the dump would write 288000000 bytes of attention maps (2 layers x 4 "
                             "heads x 3000^2 tokens x 4 bytes), over 256 MiB: choose some with "
                             "--layers L,... and/or --heads H,...")),
                 qPrintable(run.err));
        QVERIFY(!QFile::exists(target));
    }

    void badSelectorsGetOneLine_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString bert = test::goldenRoot() + "/bert";
        const QString dump = dir_.filePath("bad.safetensors");
        QTest::newRow("no dump")
            << QStringList{"inspect", "--model", bert, "--ids", "2,3", "--json", "--layers", "0"}
            << "--layers and --heads choose what --dump writes: give --dump too";
        QTest::newRow("no such layer")
            << QStringList{"inspect", "--model", bert,       "--ids", "2,3",
                           "--dump",  dump,      "--layers", "0,7"}
            << "layer 7 does not exist (the model has 2)";
        QTest::newRow("not a head") << QStringList{"inspect", "--model", bert,      "--ids", "2,3",
                                                   "--dump",  dump,      "--heads", "x"}
                                    << "--heads: 'x' is not an integer";
    }

    void badSelectorsGetOneLine() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto run = test::runHeadlight(args);
        QVERIFY(run.exitCode != 0);
        const QString reason = test::refusalReason(run, "inspect");
        QVERIFY2(reason.contains(message), qPrintable(run.err));
        QVERIFY2(!reason.trimmed().contains('\n'), qPrintable(run.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestInspectDumpSelection)
#include "test_inspect_dump_selection.moc"
