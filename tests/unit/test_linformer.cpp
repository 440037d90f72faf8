// Linformer with learned E, F (item 6, variants/compressed_attention.cpp) beyond its goldens: the
// reported map is A·F (the weight of each value token), a padded key fills no slot, every view
// draws the map although its rows need not sum to 1, and another k is refused with its reason.
#include "every_view.h"
#include "figure_builders.h"
#include "forward_runner.h"
#include "zoo_golden.h"

#include <QTest>

using namespace headlight;

namespace {
const std::string kCase = HEADLIGHT_TEST_DATA "/zoo/linformer_learned_encoder";

// out[h] = a[h] · b for a [H, T, k] and b [k, T].
Tensor timesPerHead(const Tensor& a, const Tensor& b) {
    const int64_t heads = a.dim(0), rows = a.dim(1), inner = a.dim(2), cols = b.dim(1);
    Tensor out({heads, rows, cols}, 0.0f);
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t s = 0; s < inner; ++s)
                for (int64_t j = 0; j < cols; ++j)
                    out.values()[std::size_t((h * rows + i) * cols + j)] +=
                        a.values()[std::size_t((h * rows + i) * inner + s)] *
                        b.values()[std::size_t(s * cols + j)];
    return out;
}

// The first `rows` rows of the last axis-1 block: t [.., T, C] → [.., rows, C] for a 2-D or 3-D t.
Tensor leadingRows(const Tensor& t, int64_t rows) {
    const int64_t blocks = t.shape().size() == 3 ? t.dim(0) : 1;
    const int64_t total = t.dim(int(t.shape().size()) - 2), cols = t.dim(int(t.shape().size()) - 1);
    std::vector<float> kept;
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
                kept.push_back(t.values()[std::size_t((b * total + i) * cols + j)]);
    std::vector<int64_t> shape = t.shape();
    shape[shape.size() - 2] = rows;
    return Tensor(shape, kept);
}
} // namespace

class TestLinformer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theMapIsTheWeightOfEachValueToken() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(kCase, *backend);
        CaptureRequest capture;
        capture.probabilities = true;
        capture.internals = true;
        const Trace trace = model->forward({{3, 14, 15, 9, 26, 5, 35}, {}, {}}, capture);
        for (const LayerTrace& layer : trace.layers) {
            const Tensor& weights = layer.internals.at("compressed_probabilities");
            const Tensor& f = layer.internals.at("value_projection");
            QCOMPARE(weights.shape(), (std::vector<int64_t>{4, 7, 5}));
            QCOMPARE(f.shape(), (std::vector<int64_t>{5, 7}));
            QVERIFY(test::maxAbsDiff(layer.probabilities, timesPerHead(weights, f)) < 1e-6);
        }
    }

    void aPaddedKeyFillsNoSlot() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(kCase, *backend);
        CaptureRequest capture;
        capture.internals = true;
        const Trace plain = model->forward({{3, 14, 15, 9, 26, 5}, {}, {}}, capture);
        const Trace padded = model->forward(
            {{3, 14, 15, 9, 26, 5, 35, 8, 9}, {}, {1, 1, 1, 1, 1, 1, 0, 0, 0}}, capture);
        QVERIFY(test::maxAbsDiff(plain.lastHiddenState, leadingRows(padded.lastHiddenState, 6)) <
                1e-5);
        const Tensor& e = padded.layers[0].internals.at("projection");
        for (int64_t s = 0; s < e.dim(0); ++s)
            for (int64_t t = 6; t < 9; ++t)
                QCOMPARE(e.values()[std::size_t(s * 9 + t)], 0.0f);
    }

    void everyViewDrawsTheMap() {
        const std::shared_ptr<const app::LoadedModel> model =
            app::loadCheckpoint(QString::fromStdString(kCase), chooseBackend(BackendKind::Cpu), {});
        const auto result = app::runForwardPass(model, "1 5 9 13 17 21 25 29 33", {});
        QVERIFY2(result->error.isEmpty(), qPrintable(result->error));
        test::buildEveryView(*result, 2);
        bool negative = false; // F mixes values freely: the map is not a distribution
        for (float p : result->attention.values())
            negative |= p < 0.0f;
        QVERIFY(negative);
        // ... so the heatmap of a signed head draws on a diverging scale centred on 0.
        bool diverging = false;
        for (int head = 0; head < 4; ++head) {
            app::ViewState state;
            state.head = head;
            const auto heatmap = std::get<render::HeatmapFigure>(
                app::buildFigure(app::ViewKind::Heatmap, result.get(), state));
            if (heatmap.colorBar.map != render::Colormap::Diverging) continue;
            diverging = true;
            QCOMPARE(heatmap.colorBar.low, -heatmap.colorBar.high);
            QVERIFY(heatmap.title.endsWith("(signed weights)"));
        }
        QVERIFY(diverging);
        // Lines cannot show a sign: they draw the positive weights and say so.
        app::ViewState state;
        const auto lines = std::get<render::TokenLinesFigure>(
            app::buildFigure(app::ViewKind::TokenLines, result.get(), state));
        QVERIFY(lines.title.endsWith("(positive weights of a signed map)"));
        QVERIFY(*std::min_element(lines.weights.begin(), lines.weights.end()) >= 0.0f);
    }

    void refusesAnotherK() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(kCase, *backend);
        const auto other =
            variants::parseVariantSpec(R"({"attention": {"kernel": "linformer", "projected": 8}})");
        QString error = "no error";
        try {
            model->forward({{1, 2, 3}, {}, {}}, {}, other);
        } catch (const std::exception& e) {
            error = e.what();
        }
        QCOMPARE(error,
                 QString("this checkpoint's Linformer projects keys and values to k = 5 rows with "
                         "learned E, F; set k to 5 or choose another kernel"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestLinformer)
#include "test_linformer.moc"
