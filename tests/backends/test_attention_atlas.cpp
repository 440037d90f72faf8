// The attention atlas (core/analysis/attention_atlas.h) against the dense path on each backend: a
// forward pass captures both the [H, T, T] probabilities and the queries and keys; the atlas,
// rebuilt from the queries and keys alone, must give the dense map pooled the same way within
// 1e-6 at every tile size (the cached level, coarser levels pooled from it, finer and unaligned
// regions recomputed), its exact rows, column sums and strongest keys, for one head and for the
// layer's mean. Models: the zoo's RoPE model at T = 600 (cached tiles of 4), the Mistral golden
// (grouped-query, causal, sliding window 4), the Gemma 2 golden's windowed layer (scores
// soft-capped at 5) and the BERT golden with padded keys.
#include "analysis/attention_atlas.h"
#include "atlas_dense.h"
#include "backend_fixture.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>

using namespace headlight;
using namespace headlight::analysis;

namespace {

struct AtlasCase {
    QString folder;
    int tokens = 0;
    int layer = 0;
    int paddedTail = 0; // keys masked as padding at the end
};

AtlasCase caseNamed(const QString& name) {
    if (name == "rope") return {HEADLIGHT_SOURCE_DIR "/resources/models/rope", 600, 1, 0};
    if (name == "mistral") return {HEADLIGHT_TEST_DATA "/models/mistral", 500, 1, 0};
    if (name == "gemma2") return {HEADLIGHT_TEST_DATA "/models/gemma2", 260, 0, 0};
    return {HEADLIGHT_TEST_DATA "/models/bert", 300, 0, 37};
}
} // namespace

class TestAttentionAtlas : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestAttentionAtlas(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void tilesEqualPooledDenseMap_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("head");
        for (const char* model : {"rope", "mistral", "gemma2", "bert"}) {
            QTest::addRow("%s head 1", model) << QString(model) << 1;
            QTest::addRow("%s layer mean", model) << QString(model) << AttentionAtlas::kAllHeads;
        }
    }

    void tilesEqualPooledDenseMap() {
        QFETCH(QString, model);
        QFETCH(int, head);
        const AtlasCase c = caseNamed(model);
        const auto loaded = loadModel(c.folder.toStdString(), fixture_.backend());
        CaptureRequest capture;
        capture.queriesKeys = true;
        capture.layers = {c.layer};
        const ModelInput input = test::randomAtlasInput(loaded->spec(), c.tokens, c.paddedTail, 7);
        const Trace trace = loaded->forward(input, capture);
        const LayerTrace& layer = trace.layers[std::size_t(c.layer)];
        QCOMPARE(layer.queries.dim(0), int64_t(c.tokens));

        const AtlasInput atlasInput = atlasInputOf(layer, loaded->spec(), input.attentionMask);
        int progressCalls = 0;
        // A cached level of at most 256 tiles a side: tiles of 2 to 4 tokens here, so that every
        // path runs (pooled from the cache, coarser levels pooled from it, finer ones recomputed).
        const AttentionAtlas atlas(
            atlasInput, head, [&](double) { return ++progressCalls > 0; }, 256);
        QVERIFY(progressCalls >= 2);
        QCOMPARE(atlas.cachedTile(), int64_t(c.tokens > 512 ? 4 : c.tokens > 256 ? 2 : 1));

        const Tensor dense = test::denseHeadMap(layer.probabilities, head);
        const int64_t t = c.tokens;
        const std::vector<AtlasRegion> regions = {
            {0, t, 0, t}, {0, t / 2, t / 4, t}, {37, t - 11, 5, t / 3 + 1}, {2, t - 2, 4, t}};
        for (const AtlasRegion& region : regions)
            for (const int64_t tile : {1, 2, 4, 8, 16, 64, 512})
                for (const TilePooling pooling : {TilePooling::Mean, TilePooling::Max}) {
                    const float difference =
                        test::largestTileDifference(atlas.tiles(region, tile, pooling),
                                                    poolDense(dense, region, tile, pooling));
                    QVERIFY2(difference <= 1e-6f,
                             qPrintable(QString("tile %1, region %2:%3,%4:%5, %6: %7")
                                            .arg(tile)
                                            .arg(region.q0)
                                            .arg(region.q1)
                                            .arg(region.k0)
                                            .arg(region.k1)
                                            .arg(pooling == TilePooling::Max ? "max" : "mean")
                                            .arg(double(difference))));
                }

        const int64_t query = t - 3;
        const std::vector<float> row = atlas.row(query);
        for (int64_t j = 0; j < t; ++j)
            QVERIFY(std::abs(row[std::size_t(j)] - dense.matrix()(query, j)) <= 1e-6f);
        for (int64_t j = 0; j < t; ++j) {
            double column = 0.0;
            for (int64_t i = 0; i < t; ++i)
                if (input.attentionMask.empty() || input.attentionMask[std::size_t(i)] != 0)
                    column += dense.matrix()(i, j);
            QVERIFY2(std::abs(atlas.columnSums()[std::size_t(j)] - column) <= 1e-4,
                     qPrintable(QString("column %1: %2 against %3")
                                    .arg(j)
                                    .arg(atlas.columnSums()[std::size_t(j)])
                                    .arg(column)));
        }
        const auto strongest = atlas.strongestKeys(query, 5);
        const auto seen = std::count_if(row.begin(), row.end(), [](float w) { return w > 0.0f; });
        QCOMPARE(int(strongest.size()), int(std::min<std::ptrdiff_t>(5, seen)));
        for (std::size_t i = 0; i < strongest.size(); ++i) {
            QCOMPARE(strongest[i].second, row[std::size_t(strongest[i].first)]);
            if (i > 0) QVERIFY(strongest[i].second <= strongest[i - 1].second);
        }
        QCOMPARE(strongest.front().second, *std::max_element(row.begin(), row.end()));
    }

    // Bad requests say what is wrong; cancelling stops the pass.
    void refusesBadRequests() {
        const auto loaded =
            loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", fixture_.backend());
        CaptureRequest capture;
        capture.queriesKeys = true;
        capture.probabilities = false;
        const Trace trace =
            loaded->forward(test::randomAtlasInput(loaded->spec(), 64, 0, 7), capture);
        const LayerTrace& layer = trace.layers[0];
        QVERIFY(layer.probabilities.empty());
        const AtlasInput input = atlasInputOf(layer, loaded->spec(), {});
        const AttentionAtlas atlas(input, 0);
        try {
            atlas.tiles({0, 65, 0, 64}, 4, TilePooling::Mean);
            QFAIL("a region past the text was accepted");
        } catch (const std::invalid_argument& error) {
            QCOMPARE(
                QString(error.what()),
                QString("atlas region queries 0:65, keys 0:64 is empty or outside the 64 tokens"));
        }
        try {
            atlas.tiles({0, 64, 0, 64}, 3, TilePooling::Mean);
            QFAIL("a tile of 3 was accepted");
        } catch (const std::invalid_argument& error) {
            QCOMPARE(QString(error.what()), QString("atlas tile size 3 is not a power of two"));
        }
        QVERIFY_THROWS_EXCEPTION(AttentionAtlas::Cancelled,
                                 AttentionAtlas(input, 1, [](double) { return false; }));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, AttentionAtlas(input, 4));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestAttentionAtlas)
#include "test_attention_atlas.moc"
