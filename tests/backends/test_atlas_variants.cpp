// The attention atlas for variant kernels (core/analysis/atlas_variant.h) against the weights the
// kernels themselves captured on each backend: a forward pass with the variant keeps both the
// [H, T, T] probabilities its kernel reports and the layer's queries and keys; the atlas, rebuilt
// from the queries and keys and the variant's rule, must give the captured map pooled the same
// way within 1e-6 (cached level, coarser, finer and unaligned regions), its rows and column sums.
// Variants: sparse masks (Longformer, BigBird's random blocks, the strided Sparse Transformer,
// multi-scale bands per head), Reformer LSH (two rounds; shared and separate QK) and the
// linearized kernels (FAVOR+, random Fourier features, elu + 1), on the zoo's RoPE model, the
// zoo's own Longformer, BigBird, Performer and Reformer checkpoints, the Mistral golden
// (grouped-query, sliding window) and the BERT golden with padded keys.
#include "analysis/atlas_variant.h"
#include "atlas_dense.h"
#include "backend_fixture.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>

using namespace headlight;
using namespace headlight::analysis;

namespace {

struct VariantCase {
    QString folder;
    QString variant; // JSON request; the zoo checkpoints bring their own
    int tokens = 0;
    int layer = 0;
    int paddedTail = 0;
};

QString ropeFolder() {
    return HEADLIGHT_SOURCE_DIR "/resources/models/rope";
}

QString zooFolder(const char* name) {
    return QString(HEADLIGHT_SOURCE_DIR "/resources/models/") + name;
}

std::vector<std::pair<const char*, VariantCase>> variantCases() {
    return {
        {"rope longformer",
         {ropeFolder(), R"({"mask": {"preset": "longformer", "window": 16}})", 600, 1}},
        {"rope bigbird",
         {ropeFolder(), R"({"mask": {"preset": "bigbird", "block": 8, "random": 2}})", 520, 0}},
        {"rope strided",
         {ropeFolder(), R"({"mask": {"preset": "sparse_strided", "stride": 16}})", 300, 1}},
        {"rope multiscale", {ropeFolder(), R"({"mask": {"preset": "multiscale"}})", 200, 1}},
        {"rope lsh",
         {ropeFolder(), R"({"attention": {"kernel": "lsh", "rounds": 2, "chunk": 16}})", 300, 1}},
        {"rope lsh keys",
         {ropeFolder(), R"({"attention": {"kernel": "lsh", "shared_qk": false}})", 260, 0}},
        {"rope favor", {ropeFolder(), R"({"attention": {"kernel": "favor"}, "seed": 3})", 600, 1}},
        {"rope rfa", {ropeFolder(), R"({"attention": {"kernel": "rfa"}})", 300, 0}},
        {"rope linear_elu", {ropeFolder(), R"({"attention": {"kernel": "linear_elu"}})", 300, 1}},
        {"zoo longformer", {zooFolder("longformer"), "{}", 64, 2}},
        {"zoo bigbird", {zooFolder("bigbird"), "{}", 64, 1}},
        {"zoo performer", {zooFolder("performer"), "{}", 64, 3}},
        {"zoo reformer", {zooFolder("reformer"), "{}", 64, 0}},
        {"mistral bigbird",
         {HEADLIGHT_TEST_DATA "/models/mistral", R"({"mask": {"preset": "bigbird"}})", 300, 1}},
        {"mistral lsh",
         {HEADLIGHT_TEST_DATA "/models/mistral",
          R"({"attention": {"kernel": "lsh", "shared_qk": false}})", 200, 0}},
        {"bert longformer",
         {HEADLIGHT_TEST_DATA "/models/bert", R"({"mask": {"preset": "longformer"}})", 300, 0, 37}},
        {"bert favor",
         {HEADLIGHT_TEST_DATA "/models/bert", R"({"attention": {"kernel": "favor"}})", 300, 0, 37}},
    };
}

} // namespace

class TestAtlasVariants : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestAtlasVariants(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void tilesEqualTheKernelsWeights_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<int>("head");
        const auto all = variantCases();
        for (std::size_t i = 0; i < all.size(); ++i) {
            QTest::addRow("%s head 1", all[i].first) << int(i) << 1;
            QTest::addRow("%s mean", all[i].first) << int(i) << AttentionAtlas::kAllHeads;
        }
    }

    void tilesEqualTheKernelsWeights() {
        QFETCH(int, which);
        QFETCH(int, head);
        const VariantCase c = variantCases()[std::size_t(which)].second;
        const auto loaded = loadModel(c.folder.toStdString(), fixture_.backend());
        const variants::VariantSpec variant = variants::parseVariantSpec(c.variant.toStdString());
        CaptureRequest capture;
        capture.queriesKeys = true;
        capture.layers = {c.layer};
        const ModelInput input = test::randomAtlasInput(loaded->spec(), c.tokens, c.paddedTail, 11);
        const Trace trace = loaded->forward(input, capture, variant);
        const LayerTrace& layer = trace.layers[std::size_t(c.layer)];
        const AtlasInput atlasInput =
            atlasInputOf(layer, loaded->spec(), input.attentionMask, variant, c.layer);
        QVERIFY(atlasInput.variant != nullptr);
        const AttentionAtlas atlas(atlasInput, head, {}, 128);

        const Tensor dense = test::denseHeadMap(layer.probabilities, head);
        const int64_t t = c.tokens;
        const std::vector<AtlasRegion> regions = {
            {0, t, 0, t}, {0, t / 2, t / 4, t}, {7, t - 11, 5, t / 3 + 1}};
        for (const AtlasRegion& region : regions)
            for (const int64_t tile : {1, 2, 4, 8, 64})
                for (const TilePooling pooling : {TilePooling::Mean, TilePooling::Max}) {
                    const float difference =
                        test::largestTileDifference(atlas.tiles(region, tile, pooling),
                                                    poolDense(dense, region, tile, pooling));
                    QVERIFY2(difference <= 1e-6f,
                             qPrintable(QString("tile %1, region %2:%3,%4:%5: %6")
                                            .arg(tile)
                                            .arg(region.q0)
                                            .arg(region.q1)
                                            .arg(region.k0)
                                            .arg(region.k1)
                                            .arg(double(difference))));
                }
        for (const int64_t query : {int64_t(0), t / 2, t - 1}) {
            const std::vector<float> row = atlas.row(query);
            for (int64_t j = 0; j < t; ++j)
                QVERIFY(std::abs(row[std::size_t(j)] - dense.matrix()(query, j)) <= 1e-6f);
        }
        for (int64_t j = 0; j < t; ++j) {
            double column = 0.0;
            for (int64_t i = 0; i < t; ++i)
                if (input.attentionMask.empty() || input.attentionMask[std::size_t(i)] != 0)
                    column += dense.matrix()(i, j);
            QVERIFY(std::abs(atlas.columnSums()[std::size_t(j)] - column) <= 1e-4);
        }
    }

    // A variant whose weights are not a function of one layer's Q and K is refused, by name,
    // before the pass runs.
    void refusesWhatItCannotRebuild_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("named");
        QTest::newRow("talking heads") << R"({"talking_heads": {}})"
                                       << "talking-heads attention";
        QTest::newRow("probsparse") << R"({"attention": {"kernel": "probsparse"}})"
                                    << "Informer ProbSparse attention";
        QTest::newRow("alibi mask") << R"({"position": "alibi", "mask": {"preset": "star"}})"
                                    << "ALiBi";
        QTest::newRow("prior") << R"({"prior": {"kind": "gaussian"}})"
                               << "an attention prior (RealFormer, Lazyformer, Gaussian)";
    }

    void refusesWhatItCannotRebuild() {
        QFETCH(QString, variant);
        QFETCH(QString, named);
        const auto loaded = loadModel(ropeFolder().toStdString(), fixture_.backend());
        CaptureRequest capture;
        capture.queriesKeys = true;
        capture.probabilities = false;
        try {
            loaded->forward(test::randomAtlasInput(loaded->spec(), 32, 0, 11), capture,
                            variants::parseVariantSpec(variant.toStdString()));
            QFAIL("the pass kept queries and keys for a variant the atlas cannot rebuild");
        } catch (const std::exception& error) {
            QVERIFY2(QString(error.what()).contains(" and " + named + " changes it"), error.what());
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestAtlasVariants)
#include "test_atlas_variants.moc"
