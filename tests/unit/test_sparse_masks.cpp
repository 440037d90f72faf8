// The sparse-mask composer (catalogue item 2) against the patterns the papers draw: each preset's
// mask is checked cell by cell against its rule written out independently here.
#include "variants/sparse_mask.h"

#include <QTest>
#include <algorithm>
#include <cstdlib>

using namespace headlight;
using namespace headlight::variants;

namespace {
SparseMask preset(const char* name, const PresetOptions& options = {}) {
    SparseMask mask;
    mask.preset = name;
    mask.parts = presetParts(name, options);
    return mask;
}

float at(const Tensor& mask, int64_t h, int64_t i, int64_t j) {
    const int64_t t = mask.shape()[1];
    return mask.values()[std::size_t((h * t + i) * t + j)];
}

int64_t allowedInRow(const Tensor& mask, int64_t h, int64_t i) {
    int64_t n = 0;
    for (int64_t j = 0; j < mask.shape()[2]; ++j) n += at(mask, h, i, j) != 0.0f;
    return n;
}
} // namespace

class TestSparseMasks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The rows of keys that long texts run on are the dense mask's rows, with the attention's own
    // restriction (here causality and a padded key) on top, for every preset and random keys.
    void patternRowsAreTheDenseMaskRows_data() {
        QTest::addColumn<QString>("name");
        for (const std::string& name : presetNames())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
        QTest::newRow("random") << QString("random");
    }
    void patternRowsAreTheDenseMaskRows() {
        QFETCH(QString, name);
        const int64_t t = 29;
        const int heads = 4;
        SparseMask mask;
        if (name == "random") {
            MaskPart random;
            random.kind = MaskPart::Kind::Random;
            random.count = 3;
            mask.parts = {random};
            mask.seed = 7;
        } else {
            mask = preset(name.toUtf8().constData());
        }
        const auto keep = [](int64_t i, int64_t j) { return j <= i && j != 5; };
        const Tensor dense = buildSparseMask(mask, t, heads);
        const SparsePattern pattern = buildSparsePattern(mask, t, heads, keep);
        QCOMPARE(int64_t(pattern.heads), dense.shape()[0]);
        QCOMPARE(pattern.rowStart.size(), std::size_t(pattern.heads * t + 1));
        for (int64_t h = 0; h < pattern.heads; ++h)
            for (int64_t i = 0; i < t; ++i) {
                std::vector<int32_t> want;
                for (int64_t j = 0; j < t; ++j)
                    if (at(dense, h, i, j) != 0.0f && keep(i, j)) want.push_back(int32_t(j));
                const auto row = std::size_t(h * t + i);
                const std::vector<int32_t> got(pattern.keys.begin() + pattern.rowStart[row],
                                               pattern.keys.begin() + pattern.rowStart[row + 1]);
                QCOMPARE(got, want);
            }
    }

    void longformerIsBandPlusGlobalRowsAndColumns() {
        PresetOptions o;
        o.window = 2;
        o.global = {0, -1};
        const Tensor m = buildSparseMask(preset("longformer", o), 12, 4);
        QCOMPARE(m.shape(), (std::vector<int64_t>{1, 12, 12}));
        for (int64_t i = 0; i < 12; ++i)
            for (int64_t j = 0; j < 12; ++j) {
                const bool expected = std::llabs(i - j) <= 2 || i == 0 || j == 0 || i == 11 || j == 11;
                QCOMPARE(at(m, 0, i, j), expected ? 1.0f : 0.0f);
            }
    }

    void dilatedLongformerSkipsBetweenHoles() {
        PresetOptions o;
        o.window = 2;
        o.dilation = 3;
        o.global = {};
        const Tensor m = buildSparseMask(preset("longformer", o), 16, 1);
        for (int64_t i = 0; i < 16; ++i)
            for (int64_t j = 0; j < 16; ++j) {
                const int64_t d = std::llabs(i - j);
                QCOMPARE(at(m, 0, i, j), (d <= 6 && d % 3 == 0) ? 1.0f : 0.0f);
            }
    }

    void bigbirdRandomBlocksFollowTheSeed() {
        PresetOptions o;
        o.block = 2;
        o.random = 1;
        o.global = {};
        SparseMask a = preset("bigbird", o), b = a, c = a;
        c.seed = 7;
        const Tensor ma = buildSparseMask(a, 16, 1), mb = buildSparseMask(b, 16, 1), mc = buildSparseMask(c, 16, 1);
        QVERIFY(std::ranges::equal(ma.values(), mb.values()));
        QVERIFY(!std::ranges::equal(ma.values(), mc.values()));
        // Every entry is block-aligned: a 2 × 2 block is either fully on or fully off.
        for (int64_t qb = 0; qb < 8; ++qb)
            for (int64_t kb = 0; kb < 8; ++kb) {
                const float v = at(ma, 0, 2 * qb, 2 * kb);
                QCOMPARE(at(ma, 0, 2 * qb + 1, 2 * kb + 1), v);
                QCOMPARE(at(ma, 0, 2 * qb, 2 * kb + 1), v);
                if (std::llabs(qb - kb) <= 1) QCOMPARE(v, 1.0f); // the sliding block window
            }
        // Each query block gains exactly one random block, drawn outside its window of three.
        for (int64_t qb = 0; qb < 8; ++qb) {
            const int64_t window = qb == 0 || qb == 7 ? 4 : 6;
            QCOMPARE(allowedInRow(ma, 0, 2 * qb), window + 2);
        }
    }

    void randomKeysAreDistinct() {
        SparseMask mask;
        MaskPart part;
        part.kind = MaskPart::Kind::Random;
        part.count = 3;
        mask.parts = {part};
        const Tensor m = buildSparseMask(mask, 9, 1);
        for (int64_t i = 0; i < 9; ++i) QCOMPARE(allowedInRow(m, 0, i), int64_t(3));
    }

    void sparseTransformerStridedColumns() {
        PresetOptions o;
        o.stride = 4;
        const Tensor m = buildSparseMask(preset("sparse_strided", o), 16, 1);
        for (int64_t i = 0; i < 16; ++i)
            for (int64_t j = 0; j < 16; ++j) {
                const int64_t d = std::llabs(i - j);
                QCOMPARE(at(m, 0, i, j), (d < 4 || d % 4 == 0) ? 1.0f : 0.0f);
            }
    }

    void sparseTransformerFixedSummaryColumns() {
        PresetOptions o;
        o.block = 4;
        o.summary = 1;
        const Tensor m = buildSparseMask(preset("sparse_fixed", o), 12, 1);
        for (int64_t i = 0; i < 12; ++i)
            for (int64_t j = 0; j < 12; ++j)
                QCOMPARE(at(m, 0, i, j), (i / 4 == j / 4 || j % 4 == 3) ? 1.0f : 0.0f);
    }

    void imageLocalSeesBlockAndMemory() {
        PresetOptions o;
        o.block = 4;
        o.memory = 2;
        const Tensor m = buildSparseMask(preset("image_local", o), 12, 1);
        for (int64_t i = 0; i < 12; ++i)
            for (int64_t j = 0; j < 12; ++j) {
                const int64_t start = i / 4 * 4;
                QCOMPARE(at(m, 0, i, j), (j >= start - 2 && j < start + 4) ? 1.0f : 0.0f);
            }
    }

    void multiscaleGivesEachHeadItsWindow() {
        PresetOptions o;
        o.windows = {0, 3};
        const Tensor m = buildSparseMask(preset("multiscale", o), 10, 4);
        QCOMPARE(m.shape(), (std::vector<int64_t>{4, 10, 10}));
        QCOMPARE(allowedInRow(m, 0, 5), int64_t(1));
        QCOMPARE(allowedInRow(m, 1, 5), int64_t(7));
        QCOMPARE(allowedInRow(m, 2, 5), int64_t(1));
        QCOMPARE(allowedInRow(m, 3, 5), int64_t(7));
    }

    void starIsRingPlusRelay() {
        const Tensor m = buildSparseMask(preset("star"), 8, 1);
        QCOMPARE(allowedInRow(m, 0, 0), int64_t(8)); // the relay sees everything
        QCOMPARE(allowedInRow(m, 0, 4), int64_t(4)); // 3, 4, 5 and the relay
    }

    void globalTokensPastTheTextAreIgnored() {
        SparseMask mask;
        MaskPart part;
        part.kind = MaskPart::Kind::Global;
        part.tokens = {40};
        mask.parts = {part};
        const Tensor m = buildSparseMask(mask, 5, 1);
        for (float v : m.values()) QCOMPARE(v, 0.0f);
    }

    void unknownPresetListsKnownOnes() {
        try {
            presetParts("bigbirdd", {});
            QFAIL("expected VariantError");
        } catch (const VariantError& e) {
            QVERIFY(QString(e.what()).contains("unknown mask preset 'bigbirdd'; known: star, longformer, bigbird"));
        }
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestSparseMasks)
#include "test_sparse_masks.moc"
