// Compare mode (View ▸ Compare A | B) with the zoo's pre_ln model under the offscreen platform:
// B runs the same text with a Longformer mask on its own copy of the model; B's heatmap is B's
// attention, the difference view is exactly A − B of the selected head (checked cell by cell
// against the two passes' tensors), the workspace's head selection drives both scenarios, a
// click on a row of B selects that query everywhere, with the output-effect view open A and B
// each show their variant against exact attention (B's mean KL and top-1 agreement those of
// its two passes' logits), and another checkpoint can be B. The window,
// compare mode's B, `headlight export`'s flags and a scene saved from the window describe the
// same input as the same Scenario.
#include "ablation_effect.h"
#include "classroom.h"
#include "cli.h"
#include "compare_dock.h"
#include "figure_view.h"
#include "main_window.h"
#include "text_input.h"
#include "zoo_models.h"

#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace headlight;

namespace {
constexpr int kWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement

const render::HeatmapFigure& heatmapOf(const app::FigureView* view) {
    return std::get<render::HeatmapFigure>(view->figure());
}

float attentionAt(const app::ForwardResult& r, int layer, int head, int query, int key) {
    const int64_t heads = r.attention.dim(1), t = r.attention.dim(2);
    return r.attention.values()[std::size_t(((layer * heads + head) * t + query) * t + key)];
}
} // namespace

class TestCompareDock : public QObject {
    Q_OBJECT
    std::unique_ptr<app::MainWindow> window_;
    app::Classroom* classroom_ = nullptr; // owned by the window
    app::CompareDock* dock_ = nullptr;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        classroom_ = new app::Classroom(window_.get());
        window_->show();
        QSignalSpy shown(window_->workspace(), &app::Workspace::resultShown);
        window_->openCheckpoint(test::zooModelsRoot() + "/pre_ln");
        QTRY_VERIFY_WITH_TIMEOUT(window_->session().current(), kWaitMs);
        window_->workspace()->setText("The hacker fixed the kernel bug at night.");
        QTRY_VERIFY_WITH_TIMEOUT(window_->workspace()->result() &&
                                     window_->workspace()->result()->tokenCount() == 41,
                                 kWaitMs);
        dock_ = window_->compareDock();
        QVERIFY(dock_ && dock_->isHidden());
    }

    void bRunsAVariantAndTheDifferenceIsAMinusB() {
        QSignalSpy bShown(dock_, &app::CompareDock::resultBShown);
        dock_->setVariantB(QJsonDocument::fromJson(
                               R"({"mask": {"preset": "longformer", "window": 2, "global": [0]}})")
                               .object());
        dock_->show();
        QTRY_VERIFY_WITH_TIMEOUT(dock_->resultB() && dock_->resultB()->tokenCount() == 41, kWaitMs);
        window_->workspace()->selectHead(2, 1);
        const app::ForwardResult& a = *window_->workspace()->result();
        const app::ForwardResult& b = *dock_->resultB();
        // B obeys its mask: query 20 sees keys 18..20 and token 0 only.
        QCOMPARE(attentionAt(b, 2, 1, 20, 10), 0.0f);
        QVERIFY(attentionAt(b, 2, 1, 20, 19) > 0.0f);
        QVERIFY(attentionAt(a, 2, 1, 20, 10) > 0.0f);
        QVERIFY(heatmapOf(dock_->viewA()).title.startsWith("A · Layer 2 · head 1"));
        QVERIFY(heatmapOf(dock_->viewB()).title.startsWith("B · Layer 2 · head 1"));
        const render::HeatmapFigure& diff = heatmapOf(dock_->differenceView());
        QCOMPARE(diff.rows, 41);
        for (const auto& [q, k] :
             {std::pair{20, 10}, std::pair{20, 19}, std::pair{40, 0}, std::pair{5, 5}})
            QCOMPARE(diff.values[std::size_t(q * 41 + k)],
                     attentionAt(a, 2, 1, q, k) - attentionAt(b, 2, 1, q, k));
        QCOMPARE(diff.colorBar.map, render::Colormap::Diverging);
        QCOMPARE(diff.colorBar.low, -diff.colorBar.high);
        const QImage pixels = dock_->differenceView()->grab().toImage();
        QVERIFY(pixels.width() > 200);
        window_->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/compare_dock.png");
    }

    void aClickOnBSelectsTheQueryEverywhere() {
        app::FigureView* view = dock_->viewB();
        Q_EMIT view->heatmapRowClicked(7); // as FigureView emits it for a click on row 7
        QCOMPARE(window_->workspace()->state().query, 7);
        QCOMPARE(heatmapOf(dock_->viewA()).emphasisedRow, 7);
        QCOMPARE(heatmapOf(dock_->viewB()).emphasisedRow, 7);
    }

    void theOutputEffectShowsBsVariantAgainstExactAttention() {
        app::Workspace* workspace = window_->workspace();
        const app::ForwardResult* before = dock_->resultB();
        workspace->setView(app::ViewKind::VariantEffect);
        QTRY_VERIFY_WITH_TIMEOUT(dock_->resultB() != before && dock_->resultB()->output &&
                                     dock_->resultB()->output->effect,
                                 kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(workspace->result()->output, kWaitMs);
        const app::ForwardResult& b = *dock_->resultB();
        const analysis::OutputEffect& effect = *b.output->effect;
        // The reference: B's model run exact and with B's variant, compared by ablation_effect's
        // own KL and top-1 (a separate log-softmax).
        const app::LoadedModel& model = *b.model;
        const ModelInput input = app::prepareText(model.tokenizer.get(), workspace->text()).input;
        CaptureRequest logits;
        logits.probabilities = false;
        logits.logits = true;
        const std::vector<app::PositionChange> changes =
            app::outputChange(model.model->forward(input, logits, {}).logits,
                              model.model->forward(input, logits, b.variant).logits);
        QCOMPARE(int(changes.size()), 41);
        double meanKl = 0.0, agreement = 0.0;
        for (const app::PositionChange& c : changes) {
            meanKl += c.kl / double(changes.size());
            agreement += c.flipped() ? 0.0 : 1.0 / double(changes.size());
        }
        QVERIFY2(meanKl > 1e-3, "the Longformer mask changed nothing");
        QVERIFY2(std::abs(effect.meanKl - meanKl) <= 1e-4,
                 qPrintable(QStringLiteral("%1 vs %2").arg(effect.meanKl).arg(meanKl)));
        QVERIFY(std::abs(effect.top1Agreement - agreement) <= 1e-9);
        QVERIFY(dock_->viewB()->panels());
        const render::PanelsFigure& panelsB = *dock_->viewB()->panels();
        QVERIFY2(panelsB.title.startsWith("B · Variant effect on the output"),
                 qPrintable(panelsB.title));
        QVERIFY2(
            panelsB.caption.startsWith(QStringLiteral("Mean KL %1 nats").arg(meanKl, 0, 'f', 3)),
            qPrintable(panelsB.caption));
        QCOMPARE(panelsB.panels.size(), std::size_t(4));
        // The changed predictions are a table: one row per flipped position, in order, with
        // the position, the token and both predictions in their own columns.
        const auto* changed = std::get_if<render::TableFigure>(&panelsB.panels[3]);
        QVERIFY(changed);
        QCOMPARE(changed->headers.size(), 4);
        std::vector<int> flipped;
        for (std::size_t t = 0; t < changes.size(); ++t)
            if (changes[t].flipped()) flipped.push_back(int(t));
        QVERIFY(!flipped.empty());
        QCOMPARE(changed->rows.size(), flipped.size());
        for (std::size_t i = 0; i < flipped.size(); ++i) {
            QCOMPARE(changed->rows[i].size(), 4);
            QCOMPARE(changed->rows[i][0], QString::number(flipped[i]));
            QCOMPARE(changed->rows[i][1], QStringLiteral("“%1”").arg(b.tokens.value(flipped[i])));
            const app::PositionChange& change = changes[std::size_t(flipped[i])];
            QCOMPARE(changed->rows[i][2], b.output->textOf(change.cleanTop));
            QCOMPARE(changed->rows[i][3], b.output->textOf(change.ablatedTop));
        }
        // A runs exact attention: its side says so instead of showing an effect.
        QVERIFY(dock_->viewA()->panels());
        QVERIFY(dock_->viewA()->panels()->title.startsWith("A · Variant effect on the output"));
        QVERIFY(!workspace->result()->output->effect);
        window_->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/compare_dock_effect.png");
        workspace->setView(app::ViewKind::Heatmap);
        QTRY_VERIFY(!dock_->viewB()->panels() &&
                    std::holds_alternative<render::HeatmapFigure>(dock_->viewB()->figure()));
    }

    void windowCompareAndCliGiveTheSameScenario() {
        const char* longformer = R"({"mask": {"preset": "longformer", "window": 2}})";
        QTemporaryDir dir;
        QFile spec(dir.filePath("longformer.json"));
        QVERIFY(spec.open(QIODevice::WriteOnly) && spec.write(longformer) > 0);
        spec.close();
        app::Workspace* workspace = window_->workspace();
        workspace->setView(app::ViewKind::Heatmap);
        workspace->selectHead(2, 1);
        workspace->selectQuery(-1);
        const QStringList cli = {"--model", test::zooModelsRoot() + "/pre_ln",
                                 "--text",  workspace->text(),
                                 "--view",  "heatmap",
                                 "--layer", "2",
                                 "--head",  "1",
                                 "--out",   dir.filePath("a.png")};

        const io::Scenario window = workspace->scenario();
        QCOMPARE(window.model, std::string("pre_ln")); // a zoo model by its name
        QCOMPARE(app::exportScenario(cli), window);
        dock_->setModelB({});
        dock_->setVariantB({});
        QCOMPARE(dock_->scenarioB(), window);

        dock_->setVariantB(QJsonDocument::fromJson(longformer).object());
        const io::Scenario withVariant =
            app::exportScenario(cli + QStringList{"--variant", spec.fileName()});
        QCOMPARE(dock_->scenarioB(), withVariant);
        QCOMPARE(withVariant.variant, QJsonDocument::fromJson(longformer).object());

        // A scene saved from the window, exported with --scene; --backend is the CLI's own.
        QVERIFY(classroom_->saveScene(dir.filePath("scene.json"), "caption"));
        const QStringList scene = {"--scene", dir.filePath("scene.json"), "--out",
                                   dir.filePath("b.png")};
        QCOMPARE(app::exportScenario(scene), window);
        io::Scenario onCpu = window;
        onCpu.backend = BackendKind::Cpu;
        QCOMPARE(app::exportScenario(scene + QStringList{"--backend", "cpu"}), onCpu);
        QCOMPARE(app::exportScenario(cli + QStringList{"--backend", "cpu"}), onCpu);
    }

    void anotherCheckpointCanBeB() {
        QSignalSpy bShown(dock_, &app::CompareDock::resultBShown);
        dock_->setVariantB({});
        dock_->setModelB(test::zooModelsRoot() + "/realformer");
        QTRY_VERIFY_WITH_TIMEOUT(dock_->statusLabel()->text() == "B: realformer" &&
                                     dock_->resultB()->model->folder.endsWith("realformer"),
                                 kWaitMs);
        QVERIFY(attentionAt(*dock_->resultB(), 2, 1, 20, 10) > 0.0f);
        QVERIFY(dock_->modelBox()->count() >= 4); // same as A, the zoo, open folder…
        QVERIFY(dock_->variantBox()->count() > 10);
    }

    void cleanupTestCase() { window_.reset(); }
};

HEADLIGHT_TEST_MAIN(TestCompareDock)
#include "test_compare_dock.moc"
