// The window's Atlas tab on the zoo's RoPE model at T ≈ 600 under the offscreen platform, against
// the dense map of a normal pass (every layer's [H, T, T] kept): the overview's tiles are the
// dense map pooled, the cells at one token a tile are its weights within 1e-6 and their pixels
// its colours, a clicked query's strongest keys and row profile are its row, Enter on a key
// centres the view on that cell, max pooling switches the tiles, a learned position table's
// limit refuses the pass with the reason in a dialog, File ▸ Open text file… feeds the Atlas,
// and an export of the region in view is what `headlight export --view atlas --region` draws
// (the command its provenance records draws the same PNG pixels and CSV table). With a variant
// from the variant panel (a Longformer mask, FAVOR+) the tiles and cells are the kernel's own
// weights as a normal pass captures them; the mask overlay changes exactly the pixels of its
// outline, its numbers are core's (analysis/atlas_mask_overlay.h), and an export with the
// variant and the overlay is what `export --view atlas --variant --overlay mask --region` draws;
// a variant the atlas cannot draw is refused in the tab. Screenshots go to test-output/.
#include "analysis/atlas_mask_overlay.h"
#include "atlas_dense.h"
#include "atlas_export.h"
#include "atlas_page.h"
#include "cli_runner.h"
#include "colormap.h"
#include "export/embedded_metadata.h"
#include "export_actions.h"
#include "figures/mask_outline.h"
#include "io/scenario.h"
#include "main_window.h"
#include "temp_files.h"
#include "text_input.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>
#include <numeric>

using namespace headlight;

namespace {
constexpr int kAtlasWaitMs = 120000; // a generous ceiling for a loaded CI machine
constexpr int kLayer = 1, kHead = 2;
const char* const kLongformer = R"({"mask": {"preset": "longformer", "window": 16}})";
const char* const kFavor = R"({"attention": {"kernel": "favor"}, "seed": 3})";

QJsonObject variantJson(const char* json) {
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

QString zooModel(const QString& name) {
    return QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name;
}

// About 600 characters of prose: the RoPE zoo model reads bytes, so about 600 tokens.
QString longText() {
    const QString sentence =
        QStringLiteral("The animal didn't cross the street because it was too tired. ");
    QString text;
    while (text.size() < 600)
        text += sentence;
    return text.left(600);
}

// The dense reference: a normal pass keeping every map, head kHead of layer kLayer as [T, T].
// With a variant, the weights its kernel computed.
Tensor denseMap(const std::shared_ptr<const app::LoadedModel>& model, const QString& text,
                const QJsonObject& variant = {}) {
    const auto result = app::runForwardPass(model, text, io::parseScenarioVariant(variant));
    const Tensor& all = result->attention; // [L, H, T, T]
    const int64_t heads = all.dim(1), t = all.dim(2);
    Tensor map({t, t});
    const float* from = all.data() + (kLayer * heads + kHead) * t * t;
    std::copy(from, from + t * t, map.data());
    return map;
}

void openModel(app::MainWindow& window, const QString& folder) {
    QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
    window.openCheckpoint(folder);
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), kAtlasWaitMs);
}

// Waits until the view shows a picture of exactly the region in view at `tile` tokens a tile.
void waitForPicture(app::AtlasView* view, int64_t tile) {
    QTRY_VERIFY_WITH_TIMEOUT(view->pictureCoversView() && view->picture()->tiles.tile == tile &&
                                 !view->loader().busy(),
                             kAtlasWaitMs);
}

bool nearColour(QRgb a, QRgb b) { // one step of 8-bit quantisation either way
    return std::abs(qRed(a) - qRed(b)) <= 1 && std::abs(qGreen(a) - qGreen(b)) <= 1 &&
           std::abs(qBlue(a) - qBlue(b)) <= 1;
}

// The `headlight export` command an exported file records in its provenance.
QStringList recordedCommand(const QString& path) {
    const std::optional<QString> json = render::readEmbeddedProvenance(path);
    QStringList command;
    if (!json) return command;
    for (const QJsonValue& word :
         QJsonDocument::fromJson(json->toUtf8()).object().value("command").toArray())
        command << word.toString();
    return command;
}

// Runs a recorded command again, writing to `out`.
test::CliResult rerun(QStringList command, const QString& out) {
    command[command.indexOf("--out") + 1] = out;
    return test::runHeadlight(command);
}

void saveShot(QWidget* widget, const QString& name) {
    widget->grab().save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/") + name);
}

// The RoPE model in a 1400 × 1000 window, with `variant` (if any) set as the variant panel sets
// it, the Atlas tab drawing head kHead of layer kLayer of longText(); waits for that atlas.
void showAtlas(app::MainWindow& window, const QJsonObject& variant = {}) {
    window.resize(1400, 1000);
    window.show();
    openModel(window, zooModel("rope"));
    app::Workspace* workspace = window.workspace();
    if (!variant.isEmpty()) workspace->setVariant(variant);
    workspace->showAtlas();
    workspace->selectHead(kLayer, kHead);
    workspace->setText(longText());
    app::AtlasPage* page = workspace->atlasPage();
    QTRY_VERIFY_WITH_TIMEOUT(page->result() && page->result()->text == longText() &&
                                 !page->runner().busy(),
                             kAtlasWaitMs);
}

// Waits until the view's picture covers the view with the mask overlay's numbers.
void waitForOverlay(app::AtlasView* view, int64_t tile) {
    waitForPicture(view, tile);
    QTRY_VERIFY_WITH_TIMEOUT(view->picture()->masked.has_value() && !view->loader().busy(),
                             kAtlasWaitMs);
}
} // namespace

class TestAtlasView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void atlasMatchesTheDenseMap() {
        app::MainWindow window({});
        showAtlas(window);
        app::AtlasPage* page = window.workspace()->atlasPage();
        app::AtlasView* view = page->view();
        const int64_t tokens = page->result()->tokens;
        QCOMPARE(page->result()->layer, kLayer);
        QCOMPARE(page->result()->head, kHead);
        QVERIFY2(page->infoLabel()->text().contains(QStringLiteral("%1 tokens").arg(tokens)),
                 qPrintable(page->infoLabel()->text()));
        QVERIFY2(page->infoLabel()->text().contains("position limit: none"),
                 qPrintable(page->infoLabel()->text()));
        const Tensor dense = denseMap(window.session().shared(), longText());
        QCOMPARE(dense.dim(0), tokens);

        // The overview: the whole map pooled into 4-token tiles, as the dense map pools.
        const analysis::AtlasRegion whole{0, tokens, 0, tokens};
        waitForPicture(view, 4);
        QVERIFY(test::largestTileDifference(
                    view->picture()->tiles,
                    analysis::poolDense(dense, whole, 4, analysis::TilePooling::Mean)) < 1e-6f);
        saveShot(&window, "atlas_overview.png");

        // Zoomed in to exact cells: the tiles are the dense weights, the pixels their colours.
        view->centreOn(300, 290);
        waitForPicture(view, 1);
        const analysis::AtlasTiles& cells = view->picture()->tiles;
        QVERIFY(cells.region.q0 <= 300 && cells.region.q1 > 300);
        QVERIFY(test::largestTileDifference(
                    cells, analysis::poolDense(dense, cells.region, 1,
                                               analysis::TilePooling::Mean)) < 1e-6f);
        const QImage shot = view->grab().toImage();
        const render::ColorBar& bar = view->picture()->colorBar;
        for (const auto& [q, k] : {std::pair<int64_t, int64_t>{300, 290}, {300, 300}, {295, 280}}) {
            const float weight = dense.data()[q * tokens + k];
            const QRgb expected =
                render::colorAt(bar.map, render::normalise(weight, bar.low, bar.high)).rgb();
            const QPoint centre = view->cellRect(q, k).center().toPoint();
            QVERIFY2(nearColour(shot.pixel(centre), expected),
                     qPrintable(QStringLiteral("cell %1, %2").arg(q).arg(k)));
        }
        saveShot(&window, "atlas_exact_cells.png");

        // A click on a query row: its strongest keys and its row profile are the dense row's.
        QTest::mouseClick(view, Qt::LeftButton, {}, view->cellRect(297, 290).center().toPoint());
        QCOMPARE(view->selectedQuery(), int64_t(297));
        const float* row = dense.data() + 297 * tokens;
        std::vector<int64_t> order(static_cast<std::size_t>(tokens));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [row](int64_t a, int64_t b) { return row[a] > row[b]; });
        QListWidget* keys = page->strongestKeys();
        QCOMPARE(keys->count(), app::AtlasPage::kStrongestKeys);
        for (int i = 0; i < keys->count(); ++i) {
            const int64_t key = keys->item(i)->data(Qt::UserRole).toLongLong();
            const double weight = keys->item(i)->data(Qt::UserRole + 1).toDouble();
            QVERIFY2(std::abs(weight - double(row[order[std::size_t(i)]])) < 1e-6,
                     qPrintable(QString::number(i)));
            QVERIFY(std::abs(double(row[key]) - weight) < 1e-6);
        }
        QCOMPARE(view->rowProfile().size(), std::size_t(tokens));
        for (int64_t k = 0; k < tokens; ++k)
            QVERIFY(std::abs(view->rowProfile()[std::size_t(k)] - row[k]) < 1e-6f);

        // Enter on the weakest listed key centres the view on that cell.
        const int64_t far = keys->item(keys->count() - 1)->data(Qt::UserRole).toLongLong();
        keys->setCurrentRow(keys->count() - 1);
        QTest::keyClick(keys, Qt::Key_Return);
        const analysis::AtlasRegion shown = view->visibleRegion();
        QVERIFY(shown.k0 <= far && far < shown.k1 && shown.q0 <= 297 && 297 < shown.q1);
        QVERIFY(std::abs(view->cellRect(297, far).center().x() - view->rect().center().x()) <
                view->width());
        waitForPicture(view, 1);
        saveShot(&window, "atlas_strongest_keys.png");

        // Max pooling, back at the overview.
        QTest::keyClick(view, Qt::Key_Home);
        page->poolingBox()->setCurrentIndex(1);
        waitForPicture(view, 4);
        QCOMPARE(view->picture()->pooling, analysis::TilePooling::Max);
        QVERIFY(test::largestTileDifference(
                    view->picture()->tiles,
                    analysis::poolDense(dense, whole, 4, analysis::TilePooling::Max)) < 1e-6f);
    }

    // Requests made while a pass runs: only the newest is delivered, and the view shows it.
    void theNewestRequestWins() {
        app::MainWindow window({});
        window.show();
        openModel(window, zooModel("rope"));
        app::Workspace* workspace = window.workspace();
        workspace->showAtlas();
        app::AtlasPage* page = workspace->atlasPage();
        // Why wait first: the window's own pass, ending after the tab opened, redraws the atlas
        // for the window's text; the requests below must come after that one.
        const auto settled = [&] {
            return page->result() && !page->runner().busy() && !workspace->runner().busy();
        };
        QTRY_VERIFY_WITH_TIMEOUT(settled(), kAtlasWaitMs);
        QTest::qWait(100);
        QTRY_VERIFY_WITH_TIMEOUT(settled(), kAtlasWaitMs);
        QSignalSpy finished(&page->runner(), &app::AtlasRunner::finished);
        const QString newest = longText().left(300);
        page->show(longText(), 0, 0);
        page->show(longText(), 1, analysis::AttentionAtlas::kAllHeads);
        page->show(newest, 1, 3);
        QTRY_VERIFY_WITH_TIMEOUT(page->result() && page->result()->text == newest &&
                                     !page->runner().busy(),
                                 kAtlasWaitMs);
        QTest::qWait(50); // a stale result, were one delivered, would arrive by now
        for (const QList<QVariant>& args : finished) {
            const auto result = args.at(0).value<std::shared_ptr<const app::AtlasResult>>();
            QCOMPARE(result->text, newest);
            QCOMPARE(result->head, 3);
        }
        QCOMPARE(page->view()->atlas()->head(), 3);
        QCOMPARE(page->view()->atlas()->tokens(), page->result()->tokens);
    }

    void exportIsWhatTheCliDraws() {
        app::MainWindow window({});
        showAtlas(window);
        app::AtlasPage* page = window.workspace()->atlasPage();
        page->view()->centreOn(200, 150);
        page->view()->zoomBy(0.25); // 128 tokens a side: still exact cells, labels thinned
        waitForPicture(page->view(), 1);
        const test::ScratchDir dir;
        auto* exports = window.findChild<app::ExportActions*>("exportActions");
        QVERIFY(exports->exportFigure(dir.filePath("atlas.png"), 96));
        QVERIFY(exports->exportData(dir.filePath("atlas.csv")));
        const analysis::AtlasRegion r = page->view()->visibleRegion();
        const QString region =
            QStringLiteral("%1:%2,%3:%4").arg(r.q0).arg(r.q1).arg(r.k0).arg(r.k1);
        for (const char* name : {"atlas.png", "atlas.csv"}) {
            const QStringList command = recordedCommand(dir.filePath(name));
            QCOMPARE(command.mid(0, 3), (QStringList{"export", "--view", "atlas"}));
            QCOMPARE(command.value(command.indexOf("--region") + 1), region);
            QCOMPARE(command.value(command.indexOf("--out") + 1), QString(name));
            const QString again = dir.filePath(QStringLiteral("cli_") + name);
            const test::CliResult cli = rerun(command, again);
            QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
            if (QString(name).endsWith(".png")) {
                const QImage window(dir.filePath(name)), drawn(again);
                QVERIFY(!window.isNull());
                QCOMPARE(window.convertToFormat(QImage::Format_RGB32),
                         drawn.convertToFormat(QImage::Format_RGB32));
            } else {
                QCOMPARE(render::csvWithoutComments(test::readFile(dir.filePath(name))),
                         render::csvWithoutComments(test::readFile(again)));
            }
        }
        QFile::copy(dir.filePath("atlas.png"),
                    QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/atlas_export.png"));
    }

    void variantAtlasIsTheKernelsWeights_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("named");
        QTest::newRow("longformer") << QString(kLongformer) << "longformer mask";
        QTest::newRow("favor") << QString(kFavor) << "FAVOR+";
    }

    void variantAtlasIsTheKernelsWeights() {
        QFETCH(QString, variant);
        QFETCH(QString, named);
        const QJsonObject json = variantJson(qPrintable(variant));
        app::MainWindow window({});
        showAtlas(window, json);
        app::AtlasPage* page = window.workspace()->atlasPage();
        app::AtlasView* view = page->view();
        QVERIFY(view->atlas()->input().variant);
        QVERIFY2(page->infoLabel()->text().contains(QStringLiteral("(%1)").arg(named)),
                 qPrintable(page->infoLabel()->text()));
        const int64_t tokens = page->result()->tokens;
        const Tensor dense = denseMap(window.session().shared(), longText(), json);
        const analysis::AtlasRegion whole{0, tokens, 0, tokens};
        waitForPicture(view, 4);
        QVERIFY(test::largestTileDifference(
                    view->picture()->tiles,
                    analysis::poolDense(dense, whole, 4, analysis::TilePooling::Mean)) < 1e-6f);
        view->centreOn(300, 290);
        waitForPicture(view, 1);
        const analysis::AtlasTiles& cells = view->picture()->tiles;
        QVERIFY(test::largestTileDifference(
                    cells, analysis::poolDense(dense, cells.region, 1,
                                               analysis::TilePooling::Mean)) < 1e-6f);
        QTest::mouseClick(view, Qt::LeftButton, {}, view->cellRect(297, 290).center().toPoint());
        for (int64_t k = 0; k < tokens; ++k)
            QVERIFY(std::abs(view->rowProfile()[std::size_t(k)] - dense.data()[297 * tokens + k]) <
                    1e-6f);
        saveShot(&window, QStringLiteral("atlas_variant_%1.png").arg(QTest::currentDataTag()));
    }

    void maskOverlayOutlinesTheMask() {
        app::MainWindow window({});
        showAtlas(window, variantJson(kLongformer));
        app::AtlasPage* page = window.workspace()->atlasPage();
        app::AtlasView* view = page->view();
        const int64_t tokens = page->result()->tokens;
        waitForPicture(view, 4);
        const QImage off = view->grab().toImage();
        QVERIFY(!page->maskLabel()->isVisible());

        // Ctrl+Shift+M turns the overlay on: only the outline's pixels change.
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(view, Qt::Key_M, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(page->overlayBox()->isChecked()); // a button's shortcut clicks it animated
        waitForOverlay(view, 4);
        const QImage on = view->grab().toImage();
        const app::AtlasPicture& picture = *view->picture();
        QVERIFY(!picture.outline.empty());
        QImage stroke(on.size(), QImage::Format_ARGB32_Premultiplied);
        stroke.fill(Qt::transparent);
        const QRectF map(view->cellRect(0, 0).topLeft(),
                         view->cellRect(tokens - 1, tokens - 1).bottomRight());
        {
            QPainter painter(&stroke);
            render::paintMaskOutline(painter, picture.outline,
                                     QRectF(0, 0, double(tokens), double(tokens)), map);
        }
        // The map's frame is painted over the outline, so its pixels may not change.
        const QRect frame = map.toAlignedRect();
        const auto onFrame = [&frame](int x, int y) {
            return frame.adjusted(-1, -1, 1, 1).contains(x, y) &&
                   !frame.adjusted(2, 2, -2, -2).contains(x, y);
        };
        int changed = 0, opaque = 0;
        for (int y = 0; y < on.height(); ++y)
            for (int x = 0; x < on.width(); ++x) {
                const bool differs = on.pixel(x, y) != off.pixel(x, y);
                const int alpha = qAlpha(stroke.pixel(x, y));
                changed += differs ? 1 : 0;
                opaque += alpha == 255 ? 1 : 0;
                QVERIFY2(!differs || alpha > 0, qPrintable(QStringLiteral("%1, %2").arg(x).arg(y)));
                QVERIFY2(alpha < 255 || differs || onFrame(x, y),
                         qPrintable(QStringLiteral("%1, %2").arg(x).arg(y)));
            }
        QVERIFY(changed > 500 && opaque > 500);
        saveShot(&window, "atlas_mask_overlay.png");

        // The numbers beside the map and under the pointer are core's, for the picture's tiles.
        const analysis::AttentionAtlas& atlas = *view->atlas();
        const analysis::MaskOverlayTiles core = analysis::maskOverlayTiles(
            atlas, analysis::atlasMaskOf(atlas.input()), picture.tiles.region, 4);
        QCOMPARE(picture.masked->allowedShare, core.allowedShare);
        QCOMPARE(picture.masked->outsideMass, core.outsideMass);
        QVERIFY(page->maskLabel()->isVisible());
        QVERIFY2(page->maskLabel()->text().contains(app::outsideMaskText(core.outsideShare())),
                 qPrintable(page->maskLabel()->text()));
        // A tile of queries 300–303 on the band's edge: the mask allows part of it.
        const int64_t row = 300 / 4;
        int64_t col = 0;
        while (col < core.cols && (core.allowedShare[std::size_t(row * core.cols + col)] <= 0.0f ||
                                   core.allowedShare[std::size_t(row * core.cols + col)] >= 1.0f))
            ++col;
        QVERIFY(col < core.cols);
        const auto at = std::size_t(row * core.cols + col);
        const QPointF inTile = view->cellRect(row * 4 + 2, col * 4 + 2).center();
        QTest::mouseMove(view, inTile.toPoint());
        const QString readout = page->readoutLabel()->text();
        QCOMPARE(readout, view->readoutAt(inTile));
        QVERIFY2(
            readout.contains(
                QStringLiteral("Queries 300–303 × keys %1–%2").arg(col * 4).arg(col * 4 + 3)) &&
                readout.contains(QStringLiteral("allows %1% of its cells")
                                     .arg(double(core.allowedShare[at]) * 100.0, 0, 'f', 1)) &&
                readout.contains(app::outsideMaskText(
                    core.mass[at] > 0.0 ? core.outsideMass[at] / core.mass[at] : 0.0)),
            qPrintable(readout));
    }

    // An export of the region with the variant and the overlay is what the CLI draws.
    void variantOverlayExportIsWhatTheCliDraws() {
        app::MainWindow window({});
        const QJsonObject json = variantJson(kLongformer);
        showAtlas(window, json);
        app::AtlasPage* page = window.workspace()->atlasPage();
        page->overlayBox()->setChecked(true);
        page->view()->centreOn(200, 150);
        page->view()->zoomBy(0.25);
        waitForOverlay(page->view(), 1);
        const test::ScratchDir dir;
        auto* exports = window.findChild<app::ExportActions*>("exportActions");
        QVERIFY(exports->exportFigure(dir.filePath("atlas.png"), 96));
        QVERIFY(exports->exportData(dir.filePath("atlas.csv")));
        for (const char* name : {"atlas.png", "atlas.csv"}) {
            const QStringList command = recordedCommand(dir.filePath(name));
            QCOMPARE(command.value(command.indexOf("--overlay") + 1), QString("mask"));
            const QString written = command.value(command.indexOf("--variant") + 1);
            QCOMPARE(QJsonDocument::fromJson(test::readFile(written)).object(), json);
            const QString again = dir.filePath(QStringLiteral("cli_") + name);
            const test::CliResult cli = rerun(command, again);
            QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
            if (QString(name).endsWith(".png")) {
                const QImage window(dir.filePath(name)), drawn(again);
                QVERIFY(!window.isNull());
                QCOMPARE(window.convertToFormat(QImage::Format_RGB32),
                         drawn.convertToFormat(QImage::Format_RGB32));
            } else {
                const QByteArray table = test::readFile(dir.filePath(name));
                QVERIFY(table.contains("query,key,weight,allowed share,mass,mass outside mask"));
                QCOMPARE(render::csvWithoutComments(table),
                         render::csvWithoutComments(test::readFile(again)));
            }
        }
        QFile::copy(dir.filePath("atlas.png"),
                    QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/atlas_variant_overlay_export.png"));
    }

    // A variant whose weights are not a function of one layer's queries and keys: the tab says
    // why, and shows no exact attention in its place.
    void variantTheAtlasCannotDrawIsRefusedInTheTab() {
        app::MainWindow window({});
        window.show();
        openModel(window, zooModel("rope"));
        app::Workspace* workspace = window.workspace();
        workspace->setVariant(variantJson(R"({"talking_heads": {}})"));
        workspace->showAtlas();
        workspace->setText(longText());
        app::AtlasPage* page = workspace->atlasPage();
        QTRY_VERIFY_WITH_TIMEOUT(page->view()->message().startsWith("No atlas: ") &&
                                     !page->runner().busy(),
                                 kAtlasWaitMs);
        QVERIFY(!page->view()->atlas());
        QVERIFY(!page->result());
        QVERIFY2(page->view()->message().contains("talking-heads attention changes it"),
                 qPrintable(page->view()->message()));
        QVERIFY(page->infoLabel()->text().contains("not drawn"));
        saveShot(&window, "atlas_variant_refused.png");
    }

    void learnedPositionLimitRefusesWithTheReason() {
        app::MainWindow window({});
        window.show();
        openModel(window, zooModel("learned"));
        const test::ScratchDir dir;
        const QString path = dir.filePath("long.txt");
        test::writeFile(path, longText().toUtf8());
        QVERIFY(window.openTextFile(path));
        app::Workspace* workspace = window.workspace();
        QVERIFY(workspace->atlasShown());
        QCOMPARE(workspace->text(), longText());
        QTRY_VERIFY_WITH_TIMEOUT(window.errorDialog() && window.errorDialog()->isVisible(),
                                 kAtlasWaitMs);
        const ModelSpec& spec = window.session().current()->model->spec();
        const int limit = spec.maxPositions - spec.positionOffset;
        const QString reason = window.errorDialog()->informativeText();
        QVERIFY2(reason.contains(
                     QStringLiteral("but the model takes at most %1; shorten the text").arg(limit)),
                 qPrintable(reason));
        const auto tokens =
            app::prepareText(window.session().current()->tokenizer.get(), longText())
                .input.ids.size();
        QLabel* info = workspace->atlasPage()->infoLabel();
        QVERIFY2(info->text().contains(QStringLiteral("%1 tokens").arg(tokens)) &&
                     info->text().contains(
                         QStringLiteral("position limit: %1 positions (learned position table)")
                             .arg(limit)),
                 qPrintable(info->text()));
        saveShot(&window, "atlas_refused.png");

        // A file that is not UTF-8 is refused before anything runs.
        window.errorDialog()->close();
        const QString binary = dir.filePath("binary.txt");
        test::writeFile(binary, QByteArray("\xff\xfe\x00"
                                           "bad",
                                           6));
        QVERIFY(!window.openTextFile(binary));
        QTRY_VERIFY(window.errorDialog() && window.errorDialog()->isVisible());
        QCOMPARE(window.errorDialog()->informativeText(),
                 QStringLiteral("the file is not UTF-8 text"));
    }
};

HEADLIGHT_TEST_MAIN(TestAtlasView)
#include "test_atlas_view.moc"
