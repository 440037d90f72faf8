// The window on a long text: 1,500 tokens on the RoPE zoo model (causal, rotary positions, one
// byte a token) under the suite's HEADLIGHT_MAP_CAPTURE_TOKENS=1024, so a pass that kept
// [L, H, T, T] maps would be refused. The pass keeps queries and keys (ForwardResult::streamed),
// every view draws, and each number is checked against an independent dense reference: in a
// causal model the first P rows of a map (and of the rollout) see only the first P tokens, so
// they equal the maps of a pass over the text's first P tokens, which full capture may keep.
#include "analysis/divergence.h"
#include "analysis/rollout.h"
#include "analysis/streamed_attention.h"
#include "figure_view.h"
#include "main_window.h"
#include "zoo_models.h"

#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kWaitMs = 120000; // a generous ceiling for a loaded CI machine, not a measurement
constexpr int kPrefix = 1000;   // tokens of the dense reference pass (≤ the capture limit)
constexpr double kTolerance = 1e-5;

QString longText() {
    QString text;
    for (int i = 0; text.size() < 1500; ++i)
        text += QStringLiteral("key %1 maps to value %2; ").arg(i * 7 % 97).arg(i * 13 % 89);
    return text.left(1500);
}

// The top-left size × size block of a row-major matrix `stride` wide.
std::vector<float> block(const float* values, int64_t stride, int64_t size) {
    std::vector<float> out;
    for (int64_t r = 0; r < size; ++r)
        out.insert(out.end(), values + r * stride, values + r * stride + size);
    return out;
}

// [T, T] of head `head` (or the heads' mean, head −1) of `layer` in a dense [L, H, T, T] pass.
std::vector<float> denseMap(const app::ForwardResult& dense, int layer, int head) {
    const int64_t t = dense.tokenCount(), heads = dense.headCount();
    std::vector<float> map(std::size_t(t * t), 0.0f);
    for (int h = 0; h < heads; ++h) {
        if (head >= 0 && h != head) continue;
        const float* src = dense.attention.data() + (layer * heads + h) * t * t;
        for (std::size_t i = 0; i < map.size(); ++i)
            map[i] += head >= 0 ? src[i] : src[i] / float(heads);
    }
    return map;
}

// Waits until the workspace draws a figure other than the "Building …" note (after the
// timeout, the note: the caller's checks of the figure then fail).
const render::Figure& drawn(app::Workspace* workspace) {
    const auto building = [workspace] {
        const auto* empty = std::get_if<render::EmptyFigure>(&workspace->figureView()->figure());
        return empty && empty->message.startsWith(QStringLiteral("Building"));
    };
    if (!QTest::qWaitFor([&building] { return !building(); }, kWaitMs))
        qWarning("the view is still building its map after %d ms", kWaitMs);
    return workspace->figureView()->figure();
}

QString noteOf(const render::Figure& figure) {
    const auto* empty = std::get_if<render::EmptyFigure>(&figure);
    return empty ? empty->message : QString();
}
} // namespace

class TestStreamedWindow : public QObject {
    Q_OBJECT

    app::MainWindow* window_ = nullptr;
    std::shared_ptr<const app::ForwardResult> long_, dense_;

    app::Workspace* workspace() { return window_->workspace(); }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        window_ = new app::MainWindow({});
        window_->resize(1200, 800);
        window_->show();
        QSignalSpy shown(workspace(), &app::Workspace::resultShown);
        window_->openCheckpoint(test::zooModelsRoot() + "/rope");
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
        const QMetaObject::Connection keep =
            connect(&workspace()->runner(), &app::ForwardRunner::finished, this,
                    [this](const std::shared_ptr<const app::ForwardResult>& result) {
                        if (result->text == longText()) long_ = result;
                    });
        workspace()->setText(longText());
        QTRY_VERIFY_WITH_TIMEOUT(long_ && workspace()->result() == long_.get(), kWaitMs);
        disconnect(keep);
        workspace()->runner().waitForIdle();
        dense_ = app::runForwardPass(long_->model, longText().left(kPrefix), {});
        QVERIFY2(dense_->error.isEmpty(), qPrintable(dense_->error));
    }

    void cleanupTestCase() { delete window_; }

    void theLongPassKeepsQueriesAndKeysNotMaps() {
        QCOMPARE(long_->tokenCount(), 1500);
        QVERIFY(long_->streamed);
        QVERIFY(long_->attention.empty());
        QCOMPARE(long_->layerCount(), 2);
        QCOMPARE(long_->headCount(), 4);
        // The reference pass is short: full maps, and the same first tokens.
        QVERIFY(!dense_->streamed);
        QCOMPARE(dense_->tokenCount(), kPrefix);
        QCOMPARE(long_->tokens.mid(0, kPrefix), dense_->tokens);
    }

    void theShownHeadAndMeanEqualTheDenseMaps() {
        QSignalSpy passes(&workspace()->runner(), &app::ForwardRunner::finished);
        workspace()->setView(app::ViewKind::Heatmap);
        for (const int head : {2, -1}) {
            workspace()->setAverageHeads(head < 0);
            workspace()->selectHead(1, std::max(head, 0));
            const auto* heatmap = std::get_if<render::HeatmapFigure>(&drawn(workspace()));
            QVERIFY(heatmap);
            QCOMPARE(heatmap->rows, 1500);
            const double diff = test::maxAbsDiff(block(heatmap->values.data(), 1500, kPrefix),
                                                 denseMap(*dense_, 1, head));
            QVERIFY2(diff <= kTolerance, qPrintable(QString::number(diff)));
            // Past the reference: causal rows that each sum to 1.
            for (int64_t q = kPrefix; q < 1500; q += 97) {
                double sum = 0.0;
                for (int64_t k = 0; k < 1500; ++k) {
                    const float w = heatmap->values[std::size_t(q * 1500 + k)];
                    if (k > q) QCOMPARE(w, 0.0f);
                    sum += w;
                }
                QVERIFY(std::abs(sum - 1.0) < 1e-4);
            }
        }
        workspace()->setAverageHeads(false);
        QVERIFY(passes.isEmpty()); // choosing a layer or head never reran the model
    }

    void theDifferenceViewSubtractsTheMeanOfTheSameMaps() {
        workspace()->selectHead(0, 3);
        workspace()->setView(app::ViewKind::Difference);
        const auto* heatmap = std::get_if<render::HeatmapFigure>(&drawn(workspace()));
        QVERIFY(heatmap);
        std::vector<float> expected = denseMap(*dense_, 0, 3);
        const std::vector<float> mean = denseMap(*dense_, 0, -1);
        for (std::size_t i = 0; i < expected.size(); ++i)
            expected[i] -= mean[i];
        const double diff =
            test::maxAbsDiff(block(heatmap->values.data(), 1500, kPrefix), expected);
        QVERIFY2(diff <= kTolerance, qPrintable(QString::number(diff)));
    }

    void theViolinsAreTheStreamedStatistics() {
        const analysis::StreamedStatistics streamed =
            analysis::streamedStatistics(long_->streamed->inputs(), long_->valid, std::nullopt);
        // The streamed entropy of the first rows is the dense reference's.
        const Tensor dense = analysis::attentionEntropy(dense_->attention, dense_->valid);
        for (int64_t lh = 0; lh < 2 * 4; ++lh) {
            const std::vector<float> a(streamed.entropy.data() + lh * 1500,
                                       streamed.entropy.data() + lh * 1500 + kPrefix);
            const std::vector<float> b(dense.data() + lh * kPrefix,
                                       dense.data() + (lh + 1) * kPrefix);
            QVERIFY(test::maxAbsDiff(a, b) <= kTolerance);
        }
        const app::AttentionStats expected =
            app::violinStats(streamed.entropy, streamed.adjacentJsd, long_->valid);
        for (const bool jsd : {false, true}) {
            workspace()->setView(jsd ? app::ViewKind::JsdViolins : app::ViewKind::EntropyViolins);
            const auto* violins = std::get_if<render::ViolinFigure>(&drawn(workspace()));
            QVERIFY(violins);
            const app::ViolinSet& set = jsd ? expected.jsd : expected.entropy;
            QCOMPARE(violins->grid, set.grid);
            QCOMPARE(violins->panels.size(), set.order.size());
            for (const render::ViolinPanel& panel : violins->panels)
                for (const render::ViolinShape& shape : panel.violins) {
                    const analysis::Violin& v =
                        set.violins[std::size_t(panel.layer * 4 + shape.head)];
                    QCOMPARE(shape.median, v.summary.median);
                    QCOMPARE(shape.density, v.density);
                }
        }
    }

    void theRolloutIsTheSelectedQuerysRow() {
        workspace()->selectQuery(-1);
        workspace()->setView(app::ViewKind::Rollout);
        QVERIFY(noteOf(drawn(workspace())).contains(QStringLiteral("one query at a time")));
        workspace()->selectQuery(900);
        const auto* heatmap = std::get_if<render::HeatmapFigure>(&drawn(workspace()));
        QVERIFY(heatmap);
        QCOMPARE(heatmap->rows, 1);
        const Tensor rollout = analysis::attentionRollout(dense_->attention, dense_->valid);
        const std::vector<float> row(rollout.data() + 900 * kPrefix,
                                     rollout.data() + 901 * kPrefix);
        const std::vector<float> shown(heatmap->values.begin(), heatmap->values.begin() + kPrefix);
        QVERIFY2(test::maxAbsDiff(shown, row) <= kTolerance,
                 qPrintable(QString::number(test::maxAbsDiff(shown, row))));
        QVERIFY(std::all_of(heatmap->values.begin() + 901, heatmap->values.end(),
                            [](float w) { return w == 0.0f; }));
        workspace()->selectQuery(-1);
    }

    void theViewsThatNeedEveryMapSayWhy() {
        workspace()->setView(app::ViewKind::ModelGrid);
        QVERIFY(noteOf(drawn(workspace())).contains(QStringLiteral("Atlas tab")));
        workspace()->setView(app::ViewKind::JsdMatrix);
        QVERIFY(noteOf(drawn(workspace())).contains(QStringLiteral("every pair of heads")));
        workspace()->setView(app::ViewKind::Sparsity);
        drawn(workspace());
        const render::PanelsFigure* panels = workspace()->figureView()->panels();
        QVERIFY(panels);
        QCOMPARE(panels->panels.size(), std::size_t(1));
        QVERIFY(std::get<render::NotePanel>(panels->panels.front())
                    .message.contains(QStringLiteral("shorten the text")));
    }

    void everyViewDraws() {
        for (int k = 0; k < app::kAllViewCount; ++k) {
            workspace()->setView(app::ViewKind(k));
            drawn(workspace());
            QVERIFY(!workspace()->figureView()->grab().toImage().isNull());
        }
        workspace()->setView(app::ViewKind::Heatmap);
        workspace()->runner().waitForIdle(); // the output views reran the pass
    }

    void aVariantTheAtlasCannotRebuildIsRefusedWithItsReason() {
        const auto result = app::runForwardPass(
            long_->model, longText(),
            variants::parseVariantSpec(
                R"({"mask": {"preset": "longformer", "window": 2, "global": [0]}})"));
        QVERIFY(!result->streamed);
        QVERIFY2(result->error.contains(QStringLiteral("HEADLIGHT_MAP_CAPTURE_TOKENS")),
                 qPrintable(result->error));
    }
};

HEADLIGHT_TEST_MAIN(TestStreamedWindow)
#include "test_streamed_window.moc"
