// The Features view in the window, on the zoo model pre_ln with its SAE (resources/saes/pre_ln):
// each token's strongest features are what `headlight features` prints (itself checked against
// PyTorch in test_sae_goldens), a digit's strongest is feature 116 (docs/zoo.md), a feature's
// promoted and suppressed tokens are the product of its decoder row with the unembedding read
// from the files here, a clamp from the feature editor changes the output as `inspect --clamp`
// does and undo brings the clean pass back, a scene keeps the SAE and its edits, and `headlight
// export --view features` writes its files.
#include "cli_runner.h"
#include "corpus_analysis.h"
#include "feature_editor.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "feature_scan_runner.h"
#include "features_figure.h"
#include "figure_view.h"
#include "file_hashes.h"
#include "io/safetensors.h"
#include "main_window.h"
#include "open_window.h"
#include "output_change_check.h"
#include "scene_files.h"
#include "temp_files.h"
#include "variant_dock.h"

#include <Eigen/Core>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProgressDialog>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace headlight;

namespace {
constexpr int kFeaturesWaitMs = 60000; // a generous ceiling for a loaded CI machine
const QString kModel = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/pre_ln");
const QString kSae = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/saes/pre_ln");
const QString kText = QStringLiteral("In 1984 the bug was 42.");
constexpr int kDigitFeature = 116; // docs/zoo.md: pre_ln's feature of digits
const QString kCorpus = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/texts/jargon-heldout.txt");
const QString kLabels = QStringLiteral(HEADLIGHT_TEST_DATA "/neuronpedia/pre_ln-res");

// The workspace's result once a pass after `after` has finished with the features read.
const app::ForwardResult* featuresResult(app::Workspace* workspace, quint64 after) {
    const auto ready = [&] {
        const app::ForwardResult* r = workspace->result();
        return r && r->serial > after && !workspace->runner().busy() && r->features;
    };
    return QTest::qWaitFor(ready, kFeaturesWaitMs) ? workspace->result() : nullptr;
}

// The window at 1280 × 800 on pre_ln with `text`, once its first pass is shown.
bool openModel(app::MainWindow& window, const QString& text = kText) {
    return test::openShown(window, kModel, text, kFeaturesWaitMs);
}

// The window on pre_ln with kText, the SAE attached: the Features view's result.
const app::ForwardResult* openFeatures(app::MainWindow& window) {
    if (!openModel(window)) return nullptr;
    app::Workspace* workspace = window.workspace();
    const quint64 before = workspace->result()->serial;
    if (!window.openSae(kSae)) return nullptr;
    return featuresResult(workspace, before);
}

QJsonObject runJson(const QStringList& args) {
    const test::CliResult run = test::runHeadlight(args);
    if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

// Positions of kText's tokens holding a digit.
std::vector<int> digitPositions(const app::ForwardResult& r) {
    std::vector<int> digits;
    for (int t = 0; t < r.tokenCount(); ++t)
        if (std::any_of(r.tokens[t].begin(), r.tokens[t].end(),
                        [](QChar c) { return c.isDigit(); }))
            digits.push_back(t);
    return digits;
}

// The ids of the k largest (or smallest) of `logits`, strongest first, ties by id.
std::vector<int32_t> extremeIds(const Eigen::VectorXf& logits, int k, bool largest) {
    std::vector<int32_t> ids(std::size_t(logits.size()));
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
        return largest ? logits[a] > logits[b] : logits[a] < logits[b];
    });
    ids.resize(std::size_t(k));
    return ids;
}
} // namespace

class TestFeaturesView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void withoutAnSaeTheViewSaysHowToAttachOne() {
        app::MainWindow window({});
        QVERIFY(openModel(window));
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Features);
        QVERIFY(QTest::qWaitFor(
            [&] {
                const app::ForwardResult* r = workspace->result();
                return r && !workspace->runner().busy() && !r->featuresNote.isEmpty();
            },
            kFeaturesWaitMs));
        const render::PanelsFigure* panels = workspace->figureView()->panels();
        QVERIFY(panels);
        QCOMPARE(int(panels->panels.size()), 1);
        const auto& note = std::get<render::NotePanel>(panels->panels.front());
        QVERIFY2(note.message.contains("Open SAE") && note.message.contains("Ctrl+Shift+E"),
                 qPrintable(note.message));
    }

    void eachTokensFeaturesAreWhatTheCommandPrints() {
        app::MainWindow window({});
        const app::ForwardResult* r = openFeatures(window);
        QVERIFY(r);
        QCOMPARE(window.workspace()->view(), app::ViewKind::Features);
        const app::FeatureAnalysis& a = *r->features;
        const QJsonObject cli = runJson({"features", "--model", kModel, "--sae", kSae, "--text",
                                         kText, "--backend", "cpu", "--top", "5", "--json"});
        const QJsonArray tokens = cli["tokens"].toArray();
        QCOMPARE(tokens.size(), qsizetype(r->tokenCount()));
        for (int t = 0; t < r->tokenCount(); ++t) {
            const QJsonArray want = tokens[t]["features"].toArray();
            const auto ours = app::strongestFeatures(a.encoding.features, t, 5);
            QCOMPARE(qsizetype(ours.size()), want.size());
            for (std::size_t i = 0; i < ours.size(); ++i) {
                QCOMPARE(ours[i].feature, want[qsizetype(i)]["id"].toInt());
                QVERIFY(std::abs(ours[i].activation -
                                 want[qsizetype(i)]["activation"].toDouble()) <= 1e-4);
            }
            QCOMPARE(app::firingFeatures(a.encoding.features, t), tokens[t]["l0"].toInt());
        }
        const QJsonObject quality = cli["reconstruction"].toObject();
        QVERIFY(std::abs(a.quality.varianceExplained - quality["variance_explained"].toDouble()) <=
                1e-5);
        QVERIFY(std::abs(a.quality.meanL0 - quality["l0"].toDouble()) <= 1e-9);

        const std::vector<int> digits = digitPositions(*r);
        QVERIFY(digits.size() >= 4); // 1984 and 42
        for (int t : digits)
            QCOMPARE(app::strongestFeatures(a.encoding.features, t, 1).front().feature,
                     kDigitFeature);
        // The table the view draws says the same.
        const render::PanelsFigure* panels = window.workspace()->figureView()->panels();
        QVERIFY(panels);
        QVERIFY2(panels->caption.contains("variance explained") &&
                     panels->caption.contains("as run") && panels->caption.contains("spliced"),
                 qPrintable(panels->caption));
        const auto& table = std::get<render::TableFigure>(panels->panels[1]);
        QVERIFY2(table.rows[std::size_t(digits.front())][3].startsWith("116: "),
                 qPrintable(table.rows[std::size_t(digits.front())][3]));
        // The losses: splicing the reconstruction costs less than zeroing the stream.
        QVERIFY(a.lossClean && a.lossSpliced && a.lossZeroed);
        QVERIFY(*a.lossClean < *a.lossZeroed && *a.lossSpliced < *a.lossZeroed);
        window.workspace()->figureView()->grab().save(
            QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/features_view.png"));
    }

    void aFeaturePageShowsItsActivationAndPromotedTokens() {
        app::MainWindow window({});
        const app::ForwardResult* r = openFeatures(window);
        QVERIFY(r);
        app::Workspace* workspace = window.workspace();
        // A click on the heatmap's row of feature 116 opens its page.
        const std::vector<int> shown = app::featuresShown(*r->features);
        const auto row = std::find(shown.begin(), shown.end(), kDigitFeature);
        QVERIFY(row != shown.end());
        const render::PanelsLayout layout = render::layoutPanels(
            workspace->figureView()->rect(), *workspace->figureView()->panels());
        const auto& heatmap =
            std::get<render::HeatmapFigure>(workspace->figureView()->panels()->panels[0]);
        const QRectF cell = render::heatmapCellRect(render::layoutHeatmap(layout.cells[0], heatmap),
                                                    heatmap, int(row - shown.begin()), 0);
        QTest::mouseClick(workspace->figureView(), Qt::LeftButton, {}, cell.center().toPoint());
        QCOMPARE(workspace->state().feature, kDigitFeature);
        QCOMPARE(workspace->featureBox()->value(), kDigitFeature);
        const render::PanelsFigure* page = workspace->figureView()->panels();
        QVERIFY(page && page->title.startsWith("Feature 116"));
        const auto& bars = std::get<render::BarChartFigure>(page->panels[0]);
        for (int t = 0; t < r->tokenCount(); ++t)
            QCOMPARE(bars.values[std::size_t(t)],
                     r->features->encoding.features.data()[t * 512 + kDigitFeature]);
        const auto& histogram = std::get<render::BarChartFigure>(page->panels[1]);
        QCOMPARE(int(std::accumulate(histogram.values.begin(), histogram.values.end(), 0.0f)),
                 r->tokenCount());

        // W_dec[116]·W_U, computed here from the files (the zoo model ties W_U to its embedding).
        const io::SafetensorsFile sae((kSae + "/sae_weights.safetensors").toStdString());
        const io::SafetensorsFile model((kModel + "/model.safetensors").toStdString());
        const Tensor wDec = sae.loadF32("W_dec");
        const Tensor embedding = model.loadF32("embeddings.token.weight");
        const Eigen::Map<
            const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
            unembed(embedding.data(), embedding.dim(0), embedding.dim(1));
        const Eigen::Map<const Eigen::VectorXf> row116(wDec.data() + kDigitFeature * wDec.dim(1),
                                                       wDec.dim(1));
        const Eigen::VectorXf logits = unembed * row116;
        const app::DirectLogits& ours = r->features->directLogits.at(kDigitFeature);
        QVERIFY(ours.promoted == extremeIds(logits, 10, true));
        QVERIFY(ours.suppressed == extremeIds(logits, 10, false));
        for (std::size_t i = 0; i < 10; ++i)
            QVERIFY(std::abs(ours.promotedLogits[i] - logits[ours.promoted[i]]) <= 1e-4f);
        const auto& table = std::get<render::TableFigure>(page->panels[2]);
        QCOMPARE(table.rows.size(), std::size_t(10));
        QCOMPARE(table.rows[0][1], QString::number(double(ours.promotedLogits[0]), 'f', 3));
        QCOMPARE(table.rows[9][3], QString::number(double(ours.suppressedLogits[9]), 'f', 3));
        QCOMPARE(table.rows[0][0], QStringLiteral("9")); // the digits come first (byte 57)
        workspace->figureView()->grab().save(
            QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/features_page.png"));
    }

    void aClampChangesTheOutputAsInspectAndUndoRestoresIt() {
        app::MainWindow window({});
        const app::ForwardResult* r = openFeatures(window);
        QVERIFY(r);
        app::Workspace* workspace = window.workspace();
        const std::vector<float> clean(r->features->encoding.features.values().begin(),
                                       r->features->encoding.features.values().end());
        app::FeatureEditor* editor = window.variantDock()->featureEditor();
        editor->featureBox()->setValue(kDigitFeature);
        editor->valueBox()->setValue(0.0);
        std::vector<qint64> toPixels;
        QUndoStack* undo = window.variantDock()->undoStack();
        for (int round = 0; round < 5; ++round) {
            const quint64 before = workspace->result()->serial;
            QElapsedTimer clock;
            clock.start();
            editor->clampFeature();
            r = featuresResult(workspace, before);
            QVERIFY(r);
            toPixels.push_back(clock.elapsed());
            if (round == 4) break;
            const quint64 edited = r->serial;
            undo->undo();
            QVERIFY(featuresResult(workspace, edited));
        }
        std::sort(toPixels.begin(), toPixels.end());
        qInfo("clamp to pixels on pre_ln: median %lld ms of 5 (%lld to %lld)", toPixels[2],
              toPixels.front(), toPixels.back());
        QCOMPARE(int(r->knockouts.edits.size()), 1);
        const QJsonObject cli =
            runJson({"inspect", "--model", kModel, "--text", kText, "--backend", "cpu", "--sae",
                     kSae, "--clamp", "116=0", "--splice", "with-error", "--json"});
        double largestKl = 0.0;
        test::verifySameOutputChange(r->outputChange,
                                     cli["edits"].toObject()["positions"].toArray(), largestKl);
        if (QTest::currentTestFailed()) return;
        QVERIFY2(largestKl > 1e-3, "zeroing the digit feature changes no prediction");
        QVERIFY(editor->summary()->text().contains("clamp 116 = 0"));

        const quint64 edited = r->serial;
        undo->undo();
        r = featuresResult(workspace, edited);
        QVERIFY(r);
        QVERIFY(r->knockouts.edits.empty() && r->outputChange.empty());
        QVERIFY(std::equal(clean.begin(), clean.end(),
                           r->features->encoding.features.values().begin()));
    }

    void aSceneKeepsTheSaeAndItsEdits() {
        io::Scenario saved;
        {
            app::MainWindow window({});
            QVERIFY(openFeatures(window));
            window.workspace()->selectFeature(kDigitFeature);
            app::FeatureEditor* editor = window.variantDock()->featureEditor();
            editor->featureBox()->setValue(208);
            editor->valueBox()->setValue(2.5);
            editor->steerFeature();
            saved = window.workspace()->scenario();
        }
        QCOMPARE(saved.sae, kSae.toStdString());
        QCOMPARE(saved.selection.feature, kDigitFeature);
        QCOMPARE(int(saved.edits.size()), 1);
        QVERIFY(saved.edits[0].features.steers ==
                (std::vector<analysis::FeatureValue>{{208, 2.5f}}));
        QVERIFY(saved.edits[0].features.splice == analysis::SaeSplice::None);
        const QString path = dir_.filePath("features.json");
        io::Scene scene;
        static_cast<io::Scenario&>(scene) = saved;
        scene.title = "Feature 116";
        app::saveSceneFile(path, scene);
        const io::Scene loaded = app::loadScene(path);
        QCOMPARE(loaded.sae, saved.sae);
        QVERIFY(loaded.edits == saved.edits);
        QCOMPARE(loaded.selection.feature, kDigitFeature);

        app::MainWindow window({});
        QVERIFY(openModel(window, QString::fromStdString(loaded.text)));
        app::Workspace* workspace = window.workspace();
        const quint64 before = workspace->result()->serial;
        workspace->showScenarioView(loaded);
        const app::ForwardResult* r = featuresResult(workspace, before);
        QVERIFY(r);
        QVERIFY(workspace->sae() && workspace->sae()->folder == kSae);
        QCOMPARE(workspace->state().feature, kDigitFeature);
        QVERIFY(r->knockouts.edits == saved.edits);
        QVERIFY(workspace->scenario().edits == saved.edits);
        QCOMPARE(workspace->scenario().sae, saved.sae);
    }

    // File ▸ Scan corpus: the page gains the feature's top contexts, as the scan file the CLI
    // writes for the same corpus holds them; the scan is kept on disk and read back the next
    // time; a cancelled scan attaches nothing.
    void aCorpusScanAddsTopContextsAndIsKept() {
        app::MainWindow window({});
        QVERIFY(openFeatures(window));
        app::Workspace* workspace = window.workspace();
        app::FeatureScanRunner* scans = window.featureScanRunner();
        const QString kept =
            app::keptScanPath(kModel, *workspace->sae(), app::fileSha256(kCorpus), 10);
        QFile::remove(kept);
        QSignalSpy finished(scans, &app::FeatureScanRunner::finished);
        const quint64 beforeScan = workspace->result()->serial;
        QVERIFY(scans->start(kCorpus));
        QVERIFY(QTest::qWaitFor([&] { return !scans->running() && !finished.isEmpty(); },
                                kFeaturesWaitMs));
        QCOMPARE(finished.takeFirst(), (QVariantList{true, false, QString()}));
        QVERIFY(QFileInfo::exists(kept));
        const std::shared_ptr<const app::FeatureScan> scan = workspace->sae()->scan;
        QVERIFY(scan);
        QCOMPARE(scan->texts, int64_t(app::readCorpus(kCorpus).size()));
        QCOMPARE(scan->file, kept); // a scene names the file it was kept in

        const QString cli = dir_.filePath("cli-scan.json");
        const test::CliResult run =
            test::runHeadlight({"features", "--model", kModel, "--sae", kSae, "--scan", kCorpus,
                                "--backend", "cpu", "--out", cli});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const app::FeatureScan fromCli = app::readFeatureScan(cli);
        QCOMPARE(scan->fired, fromCli.fired);

        const app::ForwardResult* r = featuresResult(workspace, beforeScan);
        QVERIFY(r && r->features->sae->scan);
        workspace->selectFeature(kDigitFeature);
        const render::PanelsFigure page = app::featuresFigure(*r, workspace->state());
        QCOMPARE(int(page.panels.size()), 4);
        const auto* contexts = std::get_if<render::TableFigure>(&page.panels[3]);
        QVERIFY(contexts);
        const auto& top = fromCli.top[kDigitFeature];
        QCOMPARE(contexts->rows.size(), top.size());
        for (std::size_t i = 0; i < top.size(); ++i)
            QCOMPARE(contexts->rows[i][2], top[i].before + "«" + top[i].token + "»" + top[i].after);
        QVERIFY2(page.caption.contains("of jargon-heldout.txt"), qPrintable(page.caption));

        QVERIFY(scans->start(kCorpus));
        QVERIFY(QTest::qWaitFor([&] { return !scans->running() && !finished.isEmpty(); },
                                kFeaturesWaitMs));
        QCOMPARE(finished.takeFirst(), (QVariantList{true, true, QString()}));
        QCOMPARE(workspace->sae()->scan->fired, fromCli.fired);
        QCOMPARE(QString::fromStdString(workspace->scenario().saeScan), kept);

        // A scene names the scan; showing it in a fresh window attaches it again.
        io::Scenario saved = workspace->scenario();
        {
            app::MainWindow other({});
            QVERIFY(openModel(other, QString::fromStdString(saved.text)));
            app::Workspace* shown = other.workspace();
            shown->showScenarioView(saved);
            QVERIFY(shown->sae() && shown->sae()->scan);
            QCOMPARE(shown->sae()->scan->fired, fromCli.fired);
        }

        // Cancelled as it starts: nothing attached, the earlier scan stays.
        QFile::remove(kept);
        const auto earlier = workspace->sae()->scan;
        QVERIFY(scans->start(kCorpus));
        QVERIFY(QTest::qWaitFor([&] { return scans->progress() != nullptr; }, kFeaturesWaitMs));
        Q_EMIT scans->progress()->canceled(); // as the Cancel button does
        QVERIFY(QTest::qWaitFor([&] { return !scans->running() && !finished.isEmpty(); },
                                kFeaturesWaitMs));
        QCOMPARE(finished.takeFirst().at(0).toBool(), false);
        QCOMPARE(workspace->sae()->scan, earlier);
    }

    // File ▸ Open feature labels: the page's title and the heatmap's rows carry the
    // descriptions of the Neuronpedia export; a hostile file is refused with its reason.
    void labelsNameTheFeatures() {
        app::MainWindow window({});
        QVERIFY(openFeatures(window));
        app::Workspace* workspace = window.workspace();
        const quint64 before = workspace->result()->serial;
        QString why;
        QVERIFY(window.featureScanRunner()->openLabels(kLabels, &why));
        const app::ForwardResult* r = featuresResult(workspace, before);
        QVERIFY(r);
        const render::PanelsFigure overview = app::featuresFigure(*r, workspace->state());
        const auto* heatmap = std::get_if<render::HeatmapFigure>(&overview.panels[0]);
        QVERIFY(heatmap);
        QVERIFY2(heatmap->rowLabels.contains("F116 digits in years and n…"),
                 qPrintable(heatmap->rowLabels.join('|')));
        workspace->selectFeature(kDigitFeature);
        const render::PanelsFigure page = app::featuresFigure(*r, workspace->state());
        QVERIFY2(page.title.startsWith("Feature 116 “digits in years and numbers”"),
                 qPrintable(page.title));
        QCOMPARE(QString::fromStdString(workspace->scenario().saeLabels),
                 QFileInfo(kLabels).absoluteFilePath());
        QVERIFY(!window.featureScanRunner()->openLabels(
            QStringLiteral(HEADLIGHT_TEST_DATA "/neuronpedia/truncated.jsonl.gz"), &why));
        QCOMPARE(why, QStringLiteral("truncated.jsonl.gz: the gzip stream is truncated"));
    }

    void exportWritesTheViewAndRefusesWithoutAnSae() {
        for (const QString& name : {QStringLiteral("features.png"), QStringLiteral("features.csv"),
                                    QStringLiteral("feature116.svg")}) {
            const QString out = dir_.filePath(name);
            QStringList args{"export", "--model",  kModel,  "--text", kText,
                             "--view", "features", "--sae", kSae,     "--backend",
                             "cpu",    "--out",    out};
            if (name.startsWith("feature116"))
                args << "--feature"
                     << "116";
            const test::CliResult run = test::runHeadlight(args);
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(QFileInfo(out).size() > 0, qPrintable(out));
            if (name.endsWith(".csv")) {
                const QString csv = QString::fromUtf8(test::readFile(out));
                QVERIFY2(csv.contains("116: "), qPrintable(csv.left(400)));
                QVERIFY(csv.contains("\"sae\""));
            }
        }
        const QString scan = dir_.filePath("export-scan.json");
        QVERIFY(test::runHeadlight({"features", "--model", kModel, "--sae", kSae, "--scan", kCorpus,
                                    "--backend", "cpu", "--out", scan})
                    .exitCode == 0);
        const QString page = dir_.filePath("page116.svg");
        const test::CliResult noted =
            test::runHeadlight({"export", "--model", kModel, "--text", kText, "--view", "features",
                                "--sae", kSae, "--feature", "116", "--scan", scan, "--labels",
                                kLabels, "--backend", "cpu", "--out", page});
        QVERIFY2(noted.exitCode == 0, qPrintable(noted.err));
        const QString svg = QString::fromUtf8(test::readFile(page));
        QVERIFY(svg.contains("Top contexts over jargon-heldout.txt"));
        QVERIFY(svg.contains("digits in years and numbers"));
        const test::CliResult wrongScan = test::runHeadlight(
            {"export", "--model", kModel, "--text", kText, "--view", "features", "--sae", kSae,
             "--scan", kSae + "/cfg.json", "--out", dir_.filePath("none.png")});
        QCOMPARE(wrongScan.exitCode, 1);
        QVERIFY2(wrongScan.err.contains("--scan cfg.json is not a feature scan"),
                 qPrintable(wrongScan.err));

        const test::CliResult missing =
            test::runHeadlight({"export", "--model", kModel, "--text", kText, "--view", "features",
                                "--out", dir_.filePath("none.png")});
        QCOMPARE(missing.exitCode, 1);
        QCOMPARE(test::refusalReason(missing, "export").trimmed(),
                 QStringLiteral("headlight export: --view features needs --sae DIR: the sparse "
                                "autoencoder to read"));
        const test::CliResult wrongView =
            test::runHeadlight({"export", "--model", kModel, "--text", kText, "--view", "heatmap",
                                "--sae", kSae, "--out", dir_.filePath("none.png")});
        QCOMPARE(wrongView.exitCode, 1);
        QVERIFY2(wrongView.err.contains("--sae is for --view features"), qPrintable(wrongView.err));
    }
};

HEADLIGHT_TEST_MAIN(TestFeaturesView)
#include "test_features_view.moc"
