// Real-size BF16 checkpoints in the main window under the offscreen platform: a
// Llama-3.2-1B-shaped one (16 layers × 32 heads, 8 KV heads, a 128,256-token tied vocabulary; 2.5
// GB) as test_real_size_window and a Llama-3.1-8B-shaped one (32 × 32, an untied LM head; 16 GB)
// as test_real_size_window_8b (support/sparse_llama.h: sparse shards with random attention
// weights, and the golden Llama's tokenizer). Each opens and a short text runs. On the 1B every
// view tab (with a variant where the view shows one), the Atlas tab, the compare dock and the
// knockout grid draw the model's data (figures of its shape, coloured pixels) with no error shown,
// and `headlight inspect` and `headlight export` read the same checkpoint; on the 8B the views
// of its own pass (but those the 1B checks with extra passes), the Atlas and `inspect` do. The
// CLI's dump of a head equals the window's. (The GPU canvas tab has no Vulkan surface offscreen;
// tests/smoke draws it.)
#include "atlas_page.h"
#include "atlas_view.h"
#include "cli_runner.h"
#include "compare_dock.h"
#include "figure_view.h"
#include "golden.h"
#include "io/safetensors.h"
#include "knockout_grid.h"
#include "main_window.h"
#include "sparse_llama.h"
#include "variant_dock.h"

#include <QColor>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace headlight;

namespace {
constexpr int kRealSizeWaitMs = 300000; // a ceiling for a loaded machine, not a measurement
const QString kRealSizeText = QStringLiteral("The animal didn't cross the street because it was");

// Pixels of a saturated colour (a colour map's, a violin's), sampled every other pixel: a
// figure that paints only text and axes has next to none.
int colouredPixels(const QImage& image) {
    int count = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            count += QColor(image.pixel(x, y)).hsvSaturation() > 80 ? 4 : 0;
    return count;
}

bool mostlyColoured(const QImage& image, double share) {
    return colouredPixels(image) > share * image.width() * image.height();
}

QString saveRealSizeShot(const QImage& image, const test::LlamaShape& shape, const QString& name) {
    const QString path = QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/real_size_%1L_%2.png")
                             .arg(shape.layers)
                             .arg(name);
    image.save(path);
    return path;
}

// Whether the pass on screen has what `kind` draws from (its extra passes run once it is shown).
bool hasWhatTheViewNeeds(const app::ForwardResult& result, app::ViewKind kind) {
    switch (kind) {
    case app::ViewKind::Sparsity:
        return result.variant.isVanilla() || !result.vanillaAttention.empty();
    case app::ViewKind::LogitLens:
    case app::ViewKind::VariantEffect:
        return result.output != nullptr;
    case app::ViewKind::QkEmbedding:
    case app::ViewKind::QkGrid:
        return result.queryKey != nullptr;
    case app::ViewKind::KnnNeighbours:
        return result.knnStore != nullptr;
    case app::ViewKind::Sinks:
        return result.sinks != nullptr;
    case app::ViewKind::Features:
        return result.features != nullptr || !result.featuresNote.isEmpty();
    default:
        return true;
    }
}

// The model's shape where the figure carries it.
void verifyModelShape(const render::Figure& figure, app::ViewKind kind, int tokens,
                      const test::LlamaShape& shape) {
    const int layers = int(shape.layers), heads = int(shape.heads);
    if (kind == app::ViewKind::ModelGrid) {
        const auto& grid = std::get<render::ModelGridFigure>(figure);
        QCOMPARE(grid.layers, layers);
        QCOMPARE(grid.heads, heads);
        QCOMPARE(grid.tokens, tokens);
    } else if (kind == app::ViewKind::JsdMatrix) {
        QCOMPARE(std::get<render::HeatmapFigure>(figure).rows, layers * heads);
    } else if (kind == app::ViewKind::Heatmap || kind == app::ViewKind::Rollout) {
        QCOMPARE(std::get<render::HeatmapFigure>(figure).rows, tokens);
        QCOMPARE(std::get<render::HeatmapFigure>(figure).cols, tokens);
    } else if (kind == app::ViewKind::EntropyViolins) {
        const auto& violins = std::get<render::ViolinFigure>(figure);
        QCOMPARE(int(violins.panels.size()), layers);
        for (const render::ViolinPanel& panel : violins.panels)
            QCOMPARE(int(panel.violins.size()), heads);
    }
}

bool hasDataPanel(const render::PanelsFigure& panels) {
    return std::ranges::any_of(panels.panels, [](const render::Panel& panel) {
        return !std::holds_alternative<render::NotePanel>(panel);
    });
}
} // namespace

class TestRealSizeWindow : public QObject {
    Q_OBJECT
    const test::LlamaShape shape_;
    const int layers_ = int(shape_.layers), heads_ = int(shape_.heads);
    test::ScratchDir scratch_;
    QString folder_;
    std::unique_ptr<app::MainWindow> window_;
    app::Workspace* workspace_ = nullptr;

    void setVariant(const QString& json) {
        QJsonObject spec = QJsonDocument::fromJson(json.toUtf8()).object();
        if (spec.contains("knn")) {
            const QString corpus = scratch_.filePath("corpus.txt");
            test::writeFile(corpus,
                            "The street was wide. The animal was tired.\nIt did not cross.\n");
            QJsonObject knn = spec["knn"].toObject();
            knn["datastore"] = corpus;
            spec["knn"] = knn;
        }
        if (spec == workspace_->variantJson()) return;
        QSignalSpy shown(workspace_, &app::Workspace::resultShown);
        workspace_->setVariant(spec);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kRealSizeWaitMs);
    }

    void verifyNoErrorShown() {
        QVERIFY(!window_->errorDialog());
        const auto* error = workspace_->findChild<QLabel*>("forwardError");
        QVERIFY2(error && error->isHidden(), qPrintable(error ? error->text() : QString()));
    }

    // The 8B runs the views of its own pass (with most of the captures they ask for), the Atlas
    // and `inspect`. The views of a variant's pass are the same code on any shape and cost the 8B a
    // minute or more each (docs/engine.md), as would the compare dock, the knockout grid and
    // `export`.
    bool checksEveryFeature() const { return shape_.layers == test::kLlama1B.layers; }

    QString saveShot(const QImage& image, const QString& name) const {
        return saveRealSizeShot(image, shape_, name);
    }

public:
    explicit TestRealSizeWindow(const test::LlamaShape& shape = test::kLlama1B)
        : shape_(shape) {}

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        folder_ = test::writeSparseLlama(scratch_, shape_, 2, test::Fill::RandomAttention);
        for (const char* name : {"tokenizer.json", "tokenizer_config.json"})
            QVERIFY(QFile::copy(test::goldenRoot() + "/llama/" + name, folder_ + "/" + name));
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        window_->resize(1400, 900);
        window_->show();
        workspace_ = window_->workspace();
        workspace_->setText(kRealSizeText);
        QSignalSpy loaded(&window_->session(), &app::ModelSession::loaded);
        window_->openCheckpoint(folder_);
        QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), kRealSizeWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(
            workspace_->result() && workspace_->result()->text == kRealSizeText, kRealSizeWaitMs);
        const int t = workspace_->tokenCount();
        QVERIFY(t > 8 && t <= 32);
        QCOMPARE(workspace_->result()->attention.shape(),
                 (std::vector<int64_t>{layers_, heads_, t, t}));
        QVERIFY(window_->windowTitle().contains(QFileInfo(folder_).fileName()));
    }

    // Rows: a view and the variant it is shown with ({} for the checkpoint's own pass), in an
    // order that changes the variant seldom; `data` false where the view explains, in a note,
    // what a Llama checkpoint lacks for it (MoE and ACT wire a zoo checkpoint's own weights).
    void everyViewDrawsTheModel_data() {
        QTest::addColumn<int>("view");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<bool>("data");
        using V = app::ViewKind;
        const QString none = "{}", lsh = R"({"attention": {"kernel": "lsh"}})";
        const struct {
            V view;
            QString variant;
            bool data;
        } rows[] = {
            {V::Heatmap, none, true},
            {V::ModelGrid, none, true},
            {V::TokenLines, none, true},
            {V::EntropyViolins, none, true},
            {V::JsdViolins, none, true},
            {V::JsdMatrix, none, true},
            {V::Rollout, none, true},
            {V::Difference, none, true},
            {V::Positions, none, true},
            {V::LogitLens, none, true},
            {V::QkEmbedding, none, true},
            {V::QkGrid, none, true},
            {V::HeadRoles, none, true},
            {V::Sinks, none, true},
            {V::MoeRouting, none, false},
            {V::ActPonder, none, false},
            {V::Training, none, false}, // until the scrubber measured a series
            {V::Features, none, false}, // until an SAE is attached
            {V::Circuits, none, true},
            {V::Sparsity, lsh, true},
            {V::LshBuckets, lsh, true},
            {V::VariantEffect, lsh, true},
            {V::EarlyExit, R"({"early_exit": {"criterion": "entropy", "threshold": 2.0}})", true},
            {V::KnnNeighbours, R"({"knn": {"k": 8, "lambda": 0.25}})", true},
        };
        static_assert(std::size(rows) == app::kAllViewCount);
        for (const auto& row : rows) {
            if (!checksEveryFeature() && row.variant != none) continue;
            // Why not here: the composition of a 16 × 32-head, 2048-wide model is about 3 · 10¹²
            // multiply-adds (L²·D³ per kind), minutes on a CI machine; test_head_table checks
            // the view on the zoo.
            if (row.view == V::Circuits) continue;
            // The 8B leaves out the views that run extra passes of code the 1B checks at real
            // size (the query-key capture; the sinks' four ablation passes, about 85 s alone on
            // 2 cores). It keeps the logit lens, which reads its own untied 128k-row LM head.
            if (!checksEveryFeature() &&
                (row.view == V::QkEmbedding || row.view == V::QkGrid || row.view == V::Sinks))
                continue;
            QTest::newRow(qPrintable(app::viewId(row.view)))
                << int(row.view) << row.variant << row.data;
        }
    }

    void everyViewDrawsTheModel() {
        QFETCH(int, view);
        QFETCH(QString, variant);
        QFETCH(bool, data);
        const auto kind = app::ViewKind(view);
        setVariant(variant);
        workspace_->setView(kind);
        workspace_->selectHead(layers_ - 1, heads_ - 1);
        QTRY_VERIFY_WITH_TIMEOUT(!workspace_->runner().busy() && workspace_->result() &&
                                     hasWhatTheViewNeeds(*workspace_->result(), kind),
                                 kRealSizeWaitMs);
        verifyNoErrorShown();
        app::FigureView* figureView = workspace_->figureView();
        const QImage pixels = figureView->grab().toImage();
        const QString shot = saveShot(pixels, app::viewId(kind));
        if (const render::PanelsFigure* panels = figureView->panels()) {
            QVERIFY2(hasDataPanel(*panels) == data,
                     qPrintable(panels->title + " | " + panels->caption));
            if (!data)
                QVERIFY(
                    std::get<render::NotePanel>(panels->panels.front()).message.contains("zoo"));
        } else {
            const auto* empty = std::get_if<render::EmptyFigure>(&figureView->figure());
            QVERIFY2(!empty, qPrintable(empty ? empty->message : QString()));
            verifyModelShape(figureView->figure(), kind, workspace_->tokenCount(), shape_);
        }
        if (data) QVERIFY2(mostlyColoured(pixels, 0.005), qPrintable(shot));
    }

    void theAtlasDrawsTheText() {
        setVariant("{}");
        workspace_->selectHead(layers_ - 1, heads_ - 1);
        workspace_->showAtlas();
        app::AtlasPage* page = workspace_->atlasPage();
        QTRY_VERIFY_WITH_TIMEOUT(page->result() && page->result()->text == kRealSizeText &&
                                     page->view()->pictureCoversView() &&
                                     !page->view()->loader().busy(),
                                 kRealSizeWaitMs);
        QCOMPARE(page->result()->tokens, int64_t(workspace_->tokenCount()));
        QCOMPARE(page->result()->layer, layers_ - 1);
        QCOMPARE(page->result()->head, heads_ - 1);
        const QImage pixels = page->view()->grab().toImage();
        QVERIFY2(mostlyColoured(pixels, 0.05), qPrintable(saveShot(pixels, "atlas")));
        verifyNoErrorShown();
        workspace_->setView(app::ViewKind::Heatmap);
    }

    void theCompareDockRunsBesideIt() {
        if (!checksEveryFeature()) QSKIP("checked on the 1B-shaped checkpoint");
        app::CompareDock* dock = window_->compareDock();
        dock->setVariantB(QJsonDocument::fromJson(R"({"attention": {"kernel": "lsh"}})").object());
        dock->show();
        const int t = workspace_->tokenCount();
        QTRY_VERIFY_WITH_TIMEOUT(dock->resultB() && dock->resultB()->tokenCount() == t,
                                 kRealSizeWaitMs);
        QCOMPARE(dock->resultB()->attention.shape(), (std::vector<int64_t>{layers_, heads_, t, t}));
        const auto& difference = std::get<render::HeatmapFigure>(dock->differenceView()->figure());
        QCOMPARE(difference.rows, t);
        const QImage pixels = dock->viewB()->grab().toImage();
        QVERIFY2(mostlyColoured(pixels, 0.05), qPrintable(saveShot(pixels, "compare_b")));
        saveShot(window_->grab().toImage(), "compare_window");
        dock->hide();
        verifyNoErrorShown();
    }

    // A knocked-out head of the last layer: the pass re-runs and the grid reads out the change
    // at the last token through the LM head.
    void theKnockoutGridKnocksOutAHead() {
        if (!checksEveryFeature()) QSKIP("checked on the 1B-shaped checkpoint");
        app::KnockoutGrid* grid = window_->variantDock()->knockoutGrid();
        app::HeadToggles* toggles = grid->toggles();
        QCOMPARE(toggles->sizeHint(), QSize(26 + heads_ * 25, 13 + layers_ * 25));
        window_->variantDock()->show();
        window_->variantDock()->raise();
        QTest::mouseClick(toggles, Qt::LeftButton, {},
                          toggles->cellRect(layers_ - 1, heads_ - 1).center());
        QTRY_VERIFY_WITH_TIMEOUT(workspace_->result() &&
                                     workspace_->result()->knockouts.heads.size() == 1 &&
                                     !workspace_->runner().busy(),
                                 kRealSizeWaitMs);
        const variants::HeadAblationSpec knocked{layers_ - 1, heads_ - 1,
                                                 variants::AblationMode::Zero};
        QCOMPARE(workspace_->result()->knockouts.heads.front(), knocked);
        QCOMPARE(int(workspace_->result()->outputChange.size()), workspace_->tokenCount());
        QVERIFY2(grid->readout()->text().contains("KL(p_clean ‖ p_ablated) = "),
                 qPrintable(grid->readout()->text()));
        saveShot(window_->grab().toImage(), "knockout_window");
        workspace_->setKnockouts({});
        verifyNoErrorShown();
    }

    // `headlight inspect` on the same checkpoint: its summary, and its dump of one head, equal
    // to the window's pass.
    void theCliInspectsTheSameCheckpoint() {
        QTRY_VERIFY_WITH_TIMEOUT(!workspace_->runner().busy(), kRealSizeWaitMs);
        const int t = workspace_->tokenCount();
        const QString dump = scratch_.freshPath();
        const test::CliResult run = test::runHeadlight(
            {"inspect", "--model", folder_, "--backend", "cpu", "--text", kRealSizeText, "--dump",
             dump, "--layers", QString::number(layers_ - 1), "--heads", QString::number(heads_ - 1),
             "--json"},
            kRealSizeWaitMs);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(json["layers"].toInt(), layers_);
        QCOMPARE(json["heads"].toInt(), heads_);
        QCOMPARE(json["ids"].toArray().size(), t);
        const Tensor head = io::SafetensorsFile(dump.toStdString()).loadF32("attentions");
        QCOMPARE(head.shape(), (std::vector<int64_t>{1, 1, t, t}));
        const std::vector<float> shown =
            app::headAttention(*workspace_->result(), layers_ - 1, heads_ - 1);
        for (std::size_t i = 0; i < shown.size(); ++i)
            QVERIFY(std::abs(head.values()[i] - shown[i]) <= 1e-5f);
    }

    // `headlight export` draws the model grid of the same pass (one export: each hashes the
    // checkpoint's weights for the figure's provenance).
    void theCliExportsTheModelGrid() {
        if (!checksEveryFeature()) QSKIP("checked on the 1B-shaped checkpoint");
        const QString png = scratch_.freshPath(".png");
        const test::CliResult run =
            test::runHeadlight({"export", "--model", folder_, "--text", kRealSizeText, "--view",
                                "model-grid", "--layer", QString::number(layers_ - 1), "--head",
                                QString::number(heads_ - 1), "--out", png},
                               kRealSizeWaitMs);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QImage grid(png);
        QVERIFY(grid.width() > 1000);
        QVERIFY2(mostlyColoured(grid, 0.05), qPrintable(saveShot(grid, "export_grid")));
    }

    void cleanupTestCase() { window_.reset(); }
};

HEADLIGHT_TEST_MAIN(TestRealSizeWindow)
// The 8B's own ctest test (tests/CMakeLists.txt names it), so that it runs beside the 1B's.
namespace {
[[maybe_unused]] const bool registered8B =
    test::registerTest({"test_real_size_window_8b", test::TestApp::Widgets,
                        [] { return std::make_unique<TestRealSizeWindow>(test::kLlama8B); }});
} // namespace
#include "test_real_size_window.moc"
