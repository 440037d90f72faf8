// The atlas's mask overlay (core/analysis/atlas_mask_overlay.h) on each backend: the zoo RoPE
// model's exact attention (captured dense) against a Longformer mask (band 8, global token 0)
// and against the model's own causal rule. Per tile, the share of allowed cells, the mass and
// the mass outside the mask must equal the dense map times a mask computed here from the
// formula, and every allowed cell must lie inside the outline, which stays a few shapes.
#include "analysis/atlas_mask_overlay.h"
#include "analysis/atlas_variant.h"
#include "atlas_dense.h"
#include "backend_fixture.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>
#include <random>

using namespace headlight;
using namespace headlight::analysis;

namespace {

constexpr int64_t kTokens = 300;
constexpr int64_t kBand = 8;

bool longformerAllows(int64_t i, int64_t j) {
    return j <= i && (i - j <= kBand || i == 0 || j == 0); // the zoo RoPE model is causal
}

// Whether the cell (i, j) lies inside one of the shapes.
bool inside(const std::vector<OutlineShape>& shapes, int64_t i, int64_t j) {
    for (const OutlineShape& s : shapes) {
        if (double(i) < s.q0 || double(i + 1) > s.q1) continue;
        const auto edge = [&s](double from, double to, double y) {
            return from + (to - from) * (y - s.q0) / (s.q1 - s.q0);
        };
        bool holds = true;
        for (const double y : {double(i), double(i + 1)})
            holds = holds && edge(s.left0, s.left1, y) <= double(j) + 1e-9 &&
                    edge(s.right0, s.right1, y) >= double(j + 1) - 1e-9;
        if (holds) return true;
    }
    return false;
}
} // namespace

class TestAtlasMaskOverlay : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    std::unique_ptr<TransformerModel> model_;
    Trace trace_;

    AtlasInput exactInput() const { return atlasInputOf(trace_.layers[1], model_->spec(), {}); }

public:
    explicit TestAtlasMaskOverlay(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() {
        fixture_.open();
        model_ = loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", fixture_.backend());
        std::mt19937 random(5);
        std::uniform_int_distribution<int32_t> token(5, int32_t(model_->spec().vocabSize) - 1);
        ModelInput input;
        for (int64_t t = 0; t < kTokens; ++t)
            input.ids.push_back(token(random));
        CaptureRequest capture;
        capture.queriesKeys = true;
        capture.layers = {1};
        trace_ = model_->forward(input, capture);
    }
    void cleanupTestCase() {
        model_.reset();
        fixture_.close();
    }

    void tilesEqualTheDenseMapTimesTheMask_data() {
        QTest::addColumn<int>("head");
        QTest::newRow("head 2") << 2;
        QTest::newRow("mean") << int(AttentionAtlas::kAllHeads);
    }

    void tilesEqualTheDenseMapTimesTheMask() {
        QFETCH(int, head);
        const variants::VariantSpec longformer = variants::parseVariantSpec(
            R"({"mask": {"preset": "longformer", "window": 8, "global": [0]}})");
        const AtlasMask mask =
            atlasMaskOf(atlasInputOf(trace_.layers[1], model_->spec(), {}, longformer, 1));
        const AttentionAtlas atlas(exactInput(), head);
        const Tensor dense = test::denseHeadMap(trace_.layers[1].probabilities, head);
        for (const AtlasRegion& region :
             {AtlasRegion{0, kTokens, 0, kTokens}, AtlasRegion{13, 250, 3, 199}})
            for (const int64_t tile : {1, 4, 16, 512}) {
                const MaskOverlayTiles tiles = maskOverlayTiles(atlas, mask, region, tile);
                std::vector<double> mass(tiles.mass.size()), outside(mass.size()),
                    allowed(mass.size()), area(mass.size());
                for (int64_t i = region.q0; i < region.q1; ++i)
                    for (int64_t j = region.k0; j < region.k1; ++j) {
                        const auto at = std::size_t((i - region.q0) / tile * tiles.cols +
                                                    (j - region.k0) / tile);
                        const double p = dense.matrix()(i, j);
                        mass[at] += p;
                        outside[at] += longformerAllows(i, j) ? 0.0 : p;
                        allowed[at] += longformerAllows(i, j) ? 1.0 : 0.0;
                        area[at] += 1.0;
                    }
                double allMass = 0.0, allOutside = 0.0;
                for (std::size_t at = 0; at < mass.size(); ++at) {
                    // Why relative: a 512-token tile holds up to 512 rows' mass, summed in f32.
                    QVERIFY2(std::abs(tiles.mass[at] - mass[at]) <= 1e-5 * std::max(1.0, mass[at]),
                             qPrintable(QString("tile %1 at %2: mass %3 against %4")
                                            .arg(tile)
                                            .arg(at)
                                            .arg(tiles.mass[at])
                                            .arg(mass[at])));
                    QVERIFY2(std::abs(tiles.outsideMass[at] - outside[at]) <=
                                 1e-5 * std::max(1.0, outside[at]),
                             qPrintable(QString("tile %1 at %2: %3 against %4")
                                            .arg(tile)
                                            .arg(at)
                                            .arg(tiles.outsideMass[at])
                                            .arg(outside[at])));
                    QCOMPARE(tiles.allowedShare[at], float(allowed[at] / area[at]));
                    allMass += mass[at], allOutside += outside[at];
                }
                QVERIFY(std::abs(tiles.outsideShare() - allOutside / allMass) <= 1e-6);
                QVERIFY(tiles.outsideShare() > 0.05); // the band drops a real share here
            }
    }

    void outlineHoldsEveryAllowedCellInAFewShapes() {
        const variants::VariantSpec longformer = variants::parseVariantSpec(
            R"({"mask": {"preset": "longformer", "window": 8, "global": [0]}})");
        const AtlasMask mask =
            atlasMaskOf(atlasInputOf(trace_.layers[1], model_->spec(), {}, longformer, 1));
        for (const AtlasRegion& region :
             {AtlasRegion{0, kTokens, 0, kTokens}, AtlasRegion{40, 290, 30, 120}}) {
            const std::vector<OutlineShape> shapes = maskOutline(mask, 0, region);
            // Rows 0 to 9 change shape row by row as the band meets the global column; past
            // them, a band and a column to the end.
            QVERIFY2(shapes.size() <= 24, qPrintable(QString::number(shapes.size())));
            for (int64_t i = region.q0; i < region.q1; ++i)
                for (int64_t j = region.k0; j < region.k1; ++j)
                    if (longformerAllows(i, j))
                        QVERIFY2(inside(shapes, i, j), qPrintable(QString("%1, %2").arg(i).arg(j)));
        }
        // The causal rule alone is one triangle, and the exact map puts nothing outside it.
        const AtlasMask causal = atlasMaskOf(exactInput());
        QCOMPARE(maskOutline(causal, 0, {0, kTokens, 0, kTokens}).size(), std::size_t(1));
        const AttentionAtlas atlas(exactInput(), AttentionAtlas::kAllHeads);
        QVERIFY(maskOverlayTiles(atlas, causal, {0, kTokens, 0, kTokens}, 8).outsideShare() < 1e-6);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestAtlasMaskOverlay)
#include "test_atlas_mask_overlay.moc"
