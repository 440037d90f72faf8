// The mixture-of-experts and ACT views (app/figures/routing_figures.h) on zoo-format checkpoints
// run on the CPU: every cell and bar is the pass's own internal (gate weight at the chosen expert,
// load shares, halting probability, ponder count), checked against the tensors independently, and a
// model without experts or ACT gets a note naming which model has them.
#include "forward_runner.h"
#include "routing_figures.h"
#include "zoo_models.h"

#include <QTest>
#include <numeric>

using namespace headlight;

namespace {

std::shared_ptr<app::ForwardResult> pass(const QString& folder, const QString& text) {
    std::shared_ptr<const app::LoadedModel> model =
        app::loadCheckpoint(folder, chooseBackend(BackendKind::Cpu), {});
    auto result = app::runForwardPass(model, text, {});
    if (!result->error.isEmpty()) qFatal("%s", qPrintable(result->error));
    return result;
}

QString zooCase(const char* name) {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") + name;
}

const Tensor& internal(const std::map<std::string, Tensor>& internals, const char* name) {
    return internals.at(name);
}
} // namespace

class TestRoutingViews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void moeCellsAreTheChosenGateWeights() {
        const auto result = pass(zooCase("moe_top_k2"), "1 5 9 13 17 21 25 29 33 37");
        app::ViewState state;
        state.layer = 1;
        const render::PanelsFigure f = app::moeRoutingFigure(*result, state);
        QCOMPARE(f.panels.size(), std::size_t(3));
        const auto& gates = std::get<render::HeatmapFigure>(f.panels[0]);
        const Tensor& choice = internal(result->layerInternals[1], "expert_choice");
        const Tensor& weight = internal(result->layerInternals[1], "expert_weight");
        QCOMPARE(gates.rows, 4);
        QCOMPARE(gates.cols, 10);
        for (int t = 0; t < 10; ++t) {
            float column = 0.0f;
            for (int e = 0; e < 4; ++e)
                column += gates.values[std::size_t(e * 10 + t)];
            QVERIFY(std::abs(column - 1.0f) < 1e-5f); // top-2 gates renormalised over the chosen
            for (int c = 0; c < 2; ++c)
                QCOMPARE(gates.values[std::size_t(int(choice.data()[t * 2 + c]) * 10 + t)],
                         weight.data()[t * 2 + c]);
        }
        const auto& load = std::get<render::BarChartFigure>(f.panels[1]);
        QCOMPARE(std::accumulate(load.values.begin(), load.values.end(), 0.0f),
                 20.0f); // 10 tokens × 2
        const auto& perLayer = std::get<render::HeatmapFigure>(f.panels[2]);
        for (int l = 0; l < 2; ++l) {
            float share = 0.0f;
            for (int e = 0; e < 4; ++e)
                share += perLayer.values[std::size_t(l * 4 + e)];
            QVERIFY(std::abs(share - 1.0f) < 1e-5f);
        }
        QVERIFY(f.caption.startsWith("Top-2 routing (GShard"));
        QVERIFY(f.title.endsWith("layer 1"));
    }

    void hashRoutingHasNoLogitsAndSaysSo() {
        const auto result = pass(zooCase("moe_hash"), "1 5 9 13 17 21");
        const render::PanelsFigure f = app::moeRoutingFigure(*result, {});
        QVERIFY(f.caption.startsWith("Hash routing"));
        const auto& gates = std::get<render::HeatmapFigure>(f.panels[0]);
        QCOMPARE(std::count(gates.values.begin(), gates.values.end(), 1.0f), 6L); // one expert each
    }

    void ponderBarsAndHaltingAreTheInternals() {
        const auto result = pass(zooCase("act_ut_post"), "1 5 9 13 17 21 25");
        const render::PanelsFigure f = app::actPonderFigure(*result, {});
        QCOMPARE(f.panels.size(), std::size_t(2));
        const auto& halting = std::get<render::HeatmapFigure>(f.panels[0]);
        const Tensor& p = internal(result->internals, "halting_probability");
        QCOMPARE(halting.rows, int(p.dim(0)));
        QCOMPARE(halting.cols, 7);
        for (std::size_t i = 0; i < p.size(); ++i)
            QCOMPARE(halting.values[i], p.data()[i]);
        const auto& ponder = std::get<render::BarChartFigure>(f.panels[1]);
        const Tensor& expected = internal(result->internals, "ponder");
        for (int t = 0; t < 7; ++t) {
            QCOMPARE(ponder.values[std::size_t(t)], expected.data()[t]);
            QVERIFY(ponder.values[std::size_t(t)] >= 1.0f); // N ≥ 1 and R ≥ 0
        }
        QVERIFY(f.caption.contains(QString("%1 steps run").arg(p.dim(0))));
    }

    void modelsWithoutThemGetANote() {
        const auto result = pass(test::zooModelsRoot() + "/pre_ln", "The cat.");
        for (const render::PanelsFigure& f :
             {app::moeRoutingFigure(*result, {}), app::actPonderFigure(*result, {})}) {
            QCOMPARE(f.panels.size(), std::size_t(1));
            const QString note = std::get<render::NotePanel>(f.panels[0]).message;
            QVERIFY2(note.contains("moe_top2") || note.contains("ut_act"), qPrintable(note));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestRoutingViews)
#include "test_routing_views.moc"
