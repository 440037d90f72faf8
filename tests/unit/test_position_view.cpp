// The positions view of a T5 zoo model (app/figures/position_figure.h): the bias per head against
// the distance is the trained table [buckets, H] read from model.safetensors at each distance's
// bucket, and the selected head's query × key map is that head's bias; ALiBi's panels stay;
// Transformer-XL shows its distance table.
#include "forward_runner.h"
#include "io/safetensors.h"
#include "position_figure.h"
#include "variants/position_bias.h"
#include "zoo_models.h"

#include <QTest>
#include <cmath>

using namespace headlight;

namespace {
std::shared_ptr<app::ForwardResult> pass(const QString& model, const QString& text) {
    std::shared_ptr<const app::LoadedModel> loaded = app::loadCheckpoint(
        test::zooModelsRoot() + "/" + model, chooseBackend(BackendKind::Cpu), {});
    return app::runForwardPass(loaded, text, {});
}
} // namespace

class TestPositionView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void t5BiasPerHeadIsTheTrainedTable() {
        const auto result = pass("t5", "a3k7q1z9m4>k7z9a3m4q1");
        app::ViewState state;
        state.head = 2;
        const render::PanelsFigure f = app::positionFigure(*result, state);
        QVERIFY(f.title.contains("T5"));
        QCOMPARE(f.panels.size(), std::size_t(2));
        const auto& perHead = std::get<render::HeatmapFigure>(f.panels[0]);
        const io::SafetensorsFile weights(
            (test::zooModelsRoot() + "/t5/model.safetensors").toStdString());
        const Tensor table = weights.loadF32("embeddings.relative_bias.weight"); // [buckets, H]
        const int t = result->tokenCount(), heads = int(table.dim(1));
        QCOMPARE(perHead.rows, heads);
        QCOMPARE(perHead.cols, t);
        // The zoo's t5 section: 32 buckets up to distance 128, causal (one direction).
        for (int h = 0; h < heads; ++h)
            for (int d = 0; d < t; ++d) {
                const int bucket = variants::t5Bucket(-d, false, 32, 128);
                QCOMPARE(perHead.values[std::size_t(h * t + d)], table.data()[bucket * heads + h]);
            }
        const auto& map = std::get<render::HeatmapFigure>(f.panels[1]);
        QVERIFY(map.title.startsWith("Head 2"));
        QCOMPARE(map.values[std::size_t(5 * t + 2)],
                 table.data()[variants::t5Bucket(-3, false, 32, 128) * heads + 2]);
    }

    void alibiStillDrawsItsSlopes() {
        const auto result = pass("alibi", "a3k7q1>k7");
        const render::PanelsFigure f = app::positionFigure(*result, {});
        QVERIFY(f.title.contains("ALiBi"));
        QVERIFY(!std::holds_alternative<render::NotePanel>(f.panels.front()));
    }

    // Transformer-XL has no input positions: the view shows the table R its W_R reads, row δ
    // the sinusoid of distance δ (sin in even, cos in odd dimensions).
    void transformerXlShowsItsDistanceTable() {
        const auto result = pass("transformer_xl", "RTFM: read the manual first!");
        const render::PanelsFigure f = app::positionFigure(*result, {});
        QVERIFY(f.title.contains("Transformer-XL"));
        QVERIFY(f.caption.contains("no absolute positions"));
        const auto& table = std::get<render::HeatmapFigure>(f.panels[0]);
        QCOMPARE(table.cols, 64);
        QVERIFY(table.rows >= result->tokenCount());
        QVERIFY(std::abs(table.values[std::size_t(3 * 64 + 0)] - std::sin(3.0)) < 1e-6);
        QVERIFY(std::abs(table.values[std::size_t(3 * 64 + 1)] - std::cos(3.0)) < 1e-6);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestPositionView)
#include "test_position_view.moc"
