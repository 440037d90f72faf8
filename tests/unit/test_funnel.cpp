// The Funnel Transformer (item 20, variants/funnel_pooling.cpp) beyond its goldens: one block is
// the plain stack, the pooled maps reach every view at token resolution (rows still sum to 1,
// the heatmap title names the pooling), and padding or a square-map option is refused.
#include "every_view.h"
#include "figure_builders.h"
#include "forward_runner.h"
#include "zoo_golden.h"
#include "zoo_models.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace headlight;

namespace {
QString zooCase(const char* name) {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") + name;
}

// A copy of a zoo case whose config.json gains `funnel`.
QString withFunnel(const QTemporaryDir& dir, const char* name, const QJsonObject& funnel) {
    const QString from = zooCase(name), to = dir.filePath(name);
    QDir().mkpath(to);
    for (const QString& file : QDir(from).entryList(QDir::Files))
        QFile::copy(from + "/" + file, to + "/" + file);
    QFile file(to + "/config.json");
    file.open(QIODevice::ReadOnly);
    QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
    file.close();
    QJsonObject section = config["headlight"].toObject();
    section["funnel"] = funnel;
    config["headlight"] = section;
    file.open(QIODevice::WriteOnly | QIODevice::Truncate);
    file.write(QJsonDocument(config).toJson());
    return to;
}

template <typename Action> QString errorOf(Action&& action) {
    try {
        action();
    } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
    }
    return "no error";
}
} // namespace

class TestFunnel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void oneBlockIsThePlainStack() {
        auto backend = makeCpuBackend();
        const auto plain = loadModel(zooCase("post_layer_learned_gelu").toStdString(), *backend);
        const auto funnel = loadModel(
            withFunnel(dir_, "post_layer_learned_gelu", {{"blocks", QJsonArray{2}}}).toStdString(),
            *backend);
        const ModelInput input{{3, 14, 15, 9, 26, 5, 35}, {}, {}};
        const Trace a = plain->forward(input), b = funnel->forward(input);
        QCOMPARE(test::maxAbsDiff(a.lastHiddenState, b.lastHiddenState), 0.0);
        QCOMPARE(test::maxAbsDiff(a.stackedProbabilities(), b.stackedProbabilities()), 0.0);
        QCOMPARE(b.internals.at("funnel_length").values()[1], 7.0f);
    }

    void hiddenStatesArePerToken() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(zooCase("funnel_encoder_2x2").toStdString(), *backend);
        CaptureRequest capture;
        capture.hiddenStates = true;
        const Trace trace = model->forward({{1, 2, 3, 4, 5}, {}, {}}, capture);
        QCOMPARE(trace.hiddenStates.size(), std::size_t(5));
        for (const Tensor& state : trace.hiddenStates)
            QCOMPARE(state.shape(), (std::vector<int64_t>{5, 32}));
        // Post placement has no final norm: the last state is the up-sampled output itself.
        QCOMPARE(test::maxAbsDiff(trace.hiddenStates.back(), trace.lastHiddenState), 0.0);
    }

    void everyViewDrawsThePooledLayers() {
        const std::shared_ptr<const app::LoadedModel> model =
            app::loadCheckpoint(zooCase("funnel_encoder_2x2"), chooseBackend(BackendKind::Cpu), {});
        const auto result = app::runForwardPass(model, "1 5 9 13 17 21 25 29 33", {});
        QVERIFY2(result->error.isEmpty(), qPrintable(result->error));
        const int64_t tokens = result->tokenCount();
        QCOMPARE(result->attention.shape(), (std::vector<int64_t>{4, 4, tokens, tokens}));
        for (int64_t row = 0; row < 4 * 4 * tokens; ++row) {
            double sum = 0.0;
            for (int64_t j = 0; j < tokens; ++j)
                sum += result->attention.values()[std::size_t(row * tokens + j)];
            QVERIFY(std::abs(sum - 1.0) < 1e-5);
        }
        test::buildEveryView(*result, 4);
        for (int layer = 0; layer < 4; ++layer) {
            app::ViewState state;
            state.layer = layer;
            const auto heatmap = std::get<render::HeatmapFigure>(
                app::buildFigure(app::ViewKind::Heatmap, result.get(), state));
            QCOMPARE(heatmap.title.contains("funnel: "), layer >= 2);
        }
    }

    void tokenResolutionSharesAPooledKey() {
        // T = 3, stride 2: block 1 rows {0, 1} ← tokens {0, 1}, {2}.
        const Tensor merge({2, 3}, {0, 1, 2, 0, 0, 1});
        const Tensor pooled({1, 2, 2}, {0.25f, 0.75f, 1.0f, 0.0f});
        const Tensor map = tokenResolution(pooled, merge);
        QCOMPARE(
            std::vector<float>(map.values().begin(), map.values().end()),
            (std::vector<float>{0.125f, 0.125f, 0.75f, 0.125f, 0.125f, 0.75f, 0.5f, 0.5f, 0.0f}));
    }

    void refusesPaddingAndSquareMapOptions() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(zooCase("funnel_encoder_2x2").toStdString(), *backend);
        QCOMPARE(
            errorOf([&] {
                model->forward({{1, 2, 3, 4}, {}, {1, 1, 1, 0}});
            }),
            QString(
                "a funnel averages neighbouring tokens, so padding would be pooled into real rows; "
                "run the text without padding"));
        const auto mask =
            variants::parseVariantSpec(R"({"mask": {"preset": "longformer", "window": 1}})");
        QCOMPARE(
            errorOf([&] {
                model->forward({{1, 2, 3, 4}, {}, {}}, {}, mask);
            }),
            QString(
                "funnel: the pooled stack runs softmax attention on rectangular maps; it does not "
                "combine with a sparse mask"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFunnel)
#include "test_funnel.moc"
