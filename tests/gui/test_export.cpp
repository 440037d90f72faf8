// Export of figures and their data, read back as a reader would: PNG size at a DPI and the colour
// of a known cell, SVG parsed (token labels as <text>, cells as <rect>, an <image> only for a
// large map), PDF header, page count, page size and no embedded image for a small map, CSV and
// safetensors contents; atomicity (a failed export leaves neither a file nor a temporary one,
// and a file already there stays as it was); and File ▸ Export figure… / Export data… in the
// window, its dialog with the DPI box, and its error dialog for a path that cannot be written.
#include "cli_runner.h"
#include "export/atomic_write.h"
#include "export/embedded_metadata.h"
#include "export/figure_data.h"
#include "export/figure_export.h"
#include "export_actions.h"
#include "export_files.h"
#include "figure_view.h"
#include "golden.h"
#include "io/safetensors.h"
#include "main_window.h"
#include "provenance.h"
#include "temp_files.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QXmlStreamReader>
#include <unistd.h>

using namespace headlight;
using render::ExportOptions;
using render::ImageFormat;

namespace {
constexpr int kWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement

// 4 × 4, one clear maximum at (row 2, col 1), zeros on row 0.
render::HeatmapFigure sampleHeatmap() {
    render::HeatmapFigure f;
    f.title = "Sample heatmap";
    f.rows = f.cols = 4;
    f.values = {0.0f,  0.0f, 0.0f,  0.0f, 0.1f,  0.2f,  0.3f,  0.4f,
                0.05f, 0.9f, 0.05f, 0.0f, 0.25f, 0.25f, 0.25f, 0.25f};
    f.rowLabels = f.colLabels = {"the", "cat", "sat", "down"};
    f.rowAxis = "Query token";
    f.colAxis = "Key token";
    f.colorBar = {render::Colormap::Viridis, 0.0, 0.9, "Attention weight"};
    return f;
}

render::HeatmapFigure largeHeatmap(int n) {
    render::HeatmapFigure f;
    f.title = "Large";
    f.rows = f.cols = n;
    for (int i = 0; i < n * n; ++i)
        f.values.push_back(float(i % 7) / 7.0f);
    for (int i = 0; i < n; ++i)
        f.rowLabels << QString::number(i);
    f.colLabels = f.rowLabels;
    f.colorBar = {render::Colormap::Viridis, 0.0, 1.0, "w"};
    return f;
}

render::ViolinFigure sampleViolins() {
    render::ViolinFigure f;
    f.title = "Entropy";
    f.valueAxis = "Entropy (nats)";
    f.grid = {0.0f, 1.0f, 2.0f, 3.0f};
    f.thresholds = render::realFormerColors(1.5, 4.5);
    f.maxValue = 3.0;
    render::ViolinPanel panel{"Layer 0", 0, {}};
    panel.violins.push_back({1, 0.5f, 1.0f, 1.5f, {0.1f, 0.5f, 0.3f, 0.1f}});
    panel.violins.push_back({0, 1.5f, 2.0f, 2.5f, {0.0f, 0.2f, 0.6f, 0.2f}});
    f.panels.push_back(panel);
    return f;
}

ExportOptions options(QSizeF inches = {4.0, 3.0}, int dpi = 150) {
    ExportOptions o;
    o.inches = inches;
    o.dpi = dpi;
    return o;
}

struct SvgContent {
    QStringList texts;
    int rects = 0;
    int images = 0;
    QString description; // <desc>: the caption line
    bool valid = true;   // well-formed XML
};

SvgContent parseSvg(const QByteArray& bytes) {
    SvgContent content;
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement) continue;
        if (xml.name() == QLatin1String("text"))
            content.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
        else if (xml.name() == QLatin1String("rect"))
            ++content.rects;
        else if (xml.name() == QLatin1String("image"))
            ++content.images;
        else if (xml.name() == QLatin1String("desc"))
            content.description = xml.readElementText();
    }
    content.valid = !xml.hasError();
    if (xml.hasError()) qWarning() << "SVG parse error:" << xml.errorString();
    return content;
}

// Every file the window exported says what made it, with the command that draws it again, and
// that command reproduces each identically: the PNG pixel for pixel, the SVG's drawing and the
// CSV's table (the window captions the figure from its scenario as the command does).
void checkWindowProvenance(app::MainWindow& window, const test::ScratchDir& dir) {
    const app::ForwardResult* result = window.workspace()->result();
    for (const char* name : {"view.png", "view.svg", "view.pdf", "view.csv", "view.safetensors"}) {
        const std::optional<app::Provenance> read = app::readProvenance(dir.filePath(name));
        QVERIFY2(read, name);
        QCOMPARE(read->modelName, QStringLiteral("bert"));
        QCOMPARE(read->files.weights.count("model.safetensors"), std::size_t(1));
        QCOMPARE(read->scenario.text, result->text.toStdString());
        QCOMPARE(read->scenario.view, app::viewId(window.workspace()->view()).toStdString());
        QCOMPARE(read->backend, QString::fromLatin1(backendName(result->model->backend->kind())));
        QCOMPARE(read->command.mid(0, 2), (QStringList{"export", "--dpi"}));
        QCOMPARE(read->command.value(read->command.indexOf("--out") + 1), QString(name));
        QVERIFY(read->command.contains("--scenario"));
    }
    // Why not the PDF here: Qt writes a PDF's fonts in QHash order, which headlight fixes in its
    // main() (docs/export.md) but this test process, which exported it, does not.
    for (const char* name : {"view.png", "view.svg", "view.csv"}) {
        const test::CliResult again = test::runHeadlight({"reproduce", dir.filePath(name)});
        QVERIFY2(again.exitCode == 0, qPrintable(again.out + again.err));
        QCOMPARE(again.out, "identical: " + dir.filePath(name) + "\n");
    }
}

// Everything in `folder` (no dot entries), to see that nothing was left behind.
QStringList entries(const QString& folder) {
    return QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
}

QString errorOf(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

void openBert(app::MainWindow& window) {
    QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
    window.openCheckpoint(test::goldenRoot() + "/bert");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
}

QAction* fileAction(QMenuBar* bar, const QString& name) {
    for (QAction* menu : bar->actions())
        if (menu->text().remove('&') == "File")
            for (QAction* action : menu->menu()->actions())
                if (action->objectName() == name) return action;
    return nullptr;
}
} // namespace

class TestExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void formatsFollowTheExtension() {
        QCOMPARE(render::imageFormatFor("a/b.PNG"), ImageFormat::Png);
        QCOMPARE(render::imageFormatFor("b.svg"), ImageFormat::Svg);
        QCOMPARE(render::imageFormatFor("b.pdf"), ImageFormat::Pdf);
        QVERIFY(!render::imageFormatFor("b.jpg"));
        QCOMPARE(app::exportFormatFor("t.CSV"), app::ExportFormat::Csv);
        QCOMPARE(app::exportFormatFor("t.safetensors"), app::ExportFormat::Safetensors);
        QVERIFY(!app::exportFormatFor("t"));
    }

    void captionNamesModelVariantAndText() {
        QCOMPARE(render::captionLine({"bert", "vanilla", "the  cat\nsat"}),
                 QString("Model: bert  ·  Variant: vanilla  ·  Text: “the cat sat”"));
        QVERIFY(render::captionLine({}).isEmpty());
    }

    void pngHasTheSizeOfItsDpiAndTheCellColours() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".png");
        const render::HeatmapFigure figure = sampleHeatmap();
        render::exportFigure(path, ImageFormat::Png, figure, options({4.0, 3.0}, 150));
        const QImage image(path);
        QCOMPARE(image.size(), QSize(600, 450));
        QCOMPARE(image.dotsPerMeterX(), qRound(150 / 0.0254));
        // The cell (row 2, col 1) holds the maximum: viridis' top; row 0 holds zeros: its bottom.
        const render::HeatmapLayout layout =
            render::layoutHeatmap(QRectF(0, 0, 4 * 96, 3 * 96), figure);
        const double scale = 150.0 / 96.0;
        const auto pixel = [&](int row, int col) {
            const QPointF c = render::heatmapCellRect(layout, figure, row, col).center() * scale;
            return QColor(image.pixel(c.toPoint()));
        };
        // Cell centres may carry the printed value: sample a quarter in from the corner instead.
        const auto corner = [&](int row, int col) {
            const QRectF cell = render::heatmapCellRect(layout, figure, row, col);
            const QPointF p = (cell.topLeft() + (cell.center() - cell.topLeft()) / 2) * scale;
            return QColor(image.pixel(p.toPoint()));
        };
        QCOMPARE(corner(2, 1), QColor(253, 231, 37));
        QCOMPARE(corner(0, 0), QColor(68, 1, 84));
        QVERIFY(pixel(0, 0) != pixel(2, 1));
        QCOMPARE(QColor(image.pixel(2, 2)), QColor(Qt::white)); // the page
    }

    void svgIsVectorWithTextAndRects() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".svg");
        ExportOptions o = options();
        o.caption = {"bert", "vanilla", "the cat sat down"};
        render::exportFigure(path, ImageFormat::Svg, sampleHeatmap(), o);
        const QByteArray bytes = test::readFile(path);
        QVERIFY(bytes.contains("<svg"));
        const SvgContent svg = parseSvg(bytes);
        for (const QString& label :
             QStringList{"the", "cat", "sat", "down", "Sample heatmap", "Query token"})
            QVERIFY2(svg.texts.contains(label),
                     qPrintable(label + " not in " + svg.texts.join('|')));
        QVERIFY2(svg.texts.join(' ').contains("Model: bert"), qPrintable(svg.texts.join('|')));
        QVERIFY2(svg.rects >= 16, qPrintable(QString::number(svg.rects))); // one per cell at least
        QCOMPARE(svg.images, 0);
        // The page is 4 × 3 inches: QSvgGenerator writes millimetres.
        QVERIFY(bytes.contains("width=\"101.6mm\""));
    }

    // Titles and texts with XML's special characters stay well-formed (QSvgGenerator writes
    // <title> and <desc> as given).
    void svgEscapesTitleAndCaption() {
        test::ScratchDir dir;
        const QString path = dir.filePath("amp.svg");
        render::HeatmapFigure figure = sampleHeatmap();
        figure.title = "Rollout (Abnar & Zuidema) <2020>";
        render::ExportOptions o = options();
        o.caption = {"bert", "vanilla", "a & b < c"};
        render::exportFigure(path, ImageFormat::Svg, figure, o);
        const SvgContent svg = parseSvg(test::readFile(path));
        QVERIFY(svg.valid);
        QVERIFY2(svg.description.contains("Text: “a & b < c”"), qPrintable(svg.description));
        QVERIFY(svg.texts.contains("Rollout (Abnar & Zuidema) <2020>"));
    }

    void svgOfALargeMapEmbedsOneImage() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".svg");
        render::exportFigure(path, ImageFormat::Svg, largeHeatmap(200), options({8, 8}));
        const SvgContent svg = parseSvg(test::readFile(path));
        QCOMPARE(svg.images, 1);
        QVERIFY2(svg.rects < 100, qPrintable(QString::number(svg.rects)));
    }

    void pdfHasOnePageOfTheChosenSize() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".pdf");
        render::exportFigure(path, ImageFormat::Pdf, sampleHeatmap(), options({8.0, 5.5}));
        const QByteArray bytes = test::readFile(path);
        QVERIFY(bytes.startsWith("%PDF-"));
        const QString text = QString::fromLatin1(bytes);
        QCOMPARE(text.count(QRegularExpression("/Type\\s*/Page\\b(?!s)")), 1);
        QVERIFY2(
            text.contains(QRegularExpression("/MediaBox\\s*\\[0 0 576(\\.0+)? 396(\\.0+)?\\]")),
            "8 × 5.5 inches is 576 × 396 points");
        QVERIFY(text.contains("/FontFile2"));       // text is text, with its font embedded
        QVERIFY(!text.contains("/Subtype /Image")); // 16 cells are rectangles, not a bitmap
    }

    void pdfOfALargeMapEmbedsAnImage() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".pdf");
        render::exportFigure(path, ImageFormat::Pdf, largeHeatmap(200), options());
        QVERIFY(test::readFile(path).contains("/Subtype /Image"));
    }

    void csvHoldsTheMatrixUnderItsLabels() {
        render::HeatmapFigure figure = sampleHeatmap();
        figure.rowLabels[1] = figure.colLabels[1] = "a,\"b\"";
        const QByteArray csv = render::csvBytes(render::figureData(figure).table);
        const QList<QByteArray> lines = csv.split('\n');
        QCOMPARE(lines.size(), 6); // header, 4 rows, and the empty tail after the last '\n'
        QCOMPARE(lines[0], QByteArray("Query token \\ Key token,the,\"a,\"\"b\"\"\",sat,down"));
        const QList<QByteArray> row2 = lines[3].split(',');
        QCOMPARE(row2[0], QByteArray("sat"));
        QCOMPARE(row2[2].toFloat(), 0.9f);
        QCOMPARE(row2[1].toFloat(), 0.05f);
    }

    void csvOfViolinsListsHeadsInTheFigureOrder() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".csv");
        app::exportToFile(path, sampleViolins(), {});
        QCOMPARE(test::readFile(path), QByteArray("panel,layer,head,q1,median,q3,band\n"
                                                  "Layer 0,0,1,0.5,1,1.5,low\n"
                                                  "Layer 0,0,0,1.5,2,2.5,middle\n"));
    }

    void safetensorsHoldTheValuesAndLabels() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".safetensors");
        ExportOptions o;
        o.caption = {"bert", "vanilla", "the cat"};
        app::exportToFile(path, sampleHeatmap(), o);
        const io::SafetensorsFile file(path.toStdString());
        const Tensor values = file.loadF32("values");
        QCOMPARE(values.shape(), (std::vector<int64_t>{4, 4}));
        QCOMPARE(values.data()[2 * 4 + 1], 0.9f);
        QCOMPARE(file.metadata().at("row_labels"),
                 std::string("[\"the\",\"cat\",\"sat\",\"down\"]"));
        QCOMPARE(file.metadata().at("model"), std::string("bert"));

        const QString violins = dir.freshPath(".safetensors");
        app::exportToFile(violins, sampleViolins(), {});
        const io::SafetensorsFile v(violins.toStdString());
        QCOMPARE(v.loadF32("median").shape(), (std::vector<int64_t>{1, 2}));
        QCOMPARE(v.loadF32("median").data()[1], 1.0f); // by head index, not figure order
        QCOMPARE(v.loadF32("density").shape(), (std::vector<int64_t>{1, 2, 4}));
    }

    void emptyFigureHasNoData() {
        const QString error = errorOf([] { render::figureData(render::EmptyFigure{"no model"}); });
        QCOMPARE(error, QString("nothing to export: no model"));
    }

    void unwritablePathsLeaveNothing() {
        test::ScratchDir dir;
        const QString file = dir.freshPath(".txt");
        test::writeFile(file, "x");
        const QStringList paths{dir.filePath("missing/figure.pdf"), file + "/figure.pdf"};
        for (const QString& path : paths) {
            const QString error = errorOf(
                [&] { render::exportFigure(path, ImageFormat::Pdf, sampleHeatmap(), options()); });
            QVERIFY2(error.startsWith("cannot write " + path), qPrintable(error));
            QVERIFY(!error.contains('\n'));
            QVERIFY(!QFileInfo::exists(path));
        }
        QCOMPARE(entries(dir.path()), QStringList{QFileInfo(file).fileName()});
        if (geteuid() != 0) { // root writes into read-only folders
            const QString locked = dir.freshFolder();
            QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
            const QString error = errorOf([&] {
                render::exportFigure(locked + "/f.png", ImageFormat::Png, sampleHeatmap(),
                                     options());
            });
            QVERIFY2(error.startsWith("cannot write"), qPrintable(error));
            QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                              QFileDevice::ExeOwner);
            QVERIFY(entries(locked).isEmpty());
        }
    }

    void aFailedRenameLeavesNoTemporaryFile() {
        test::ScratchDir dir;
        const QString target = dir.filePath("figure.svg");
        // The target turns into a non-empty folder while the file is written: the final rename
        // then fails, as it would on a path another program took meanwhile.
        const QString error = errorOf([&] {
            render::writeAtomically(target, [&](QIODevice& device) {
                device.write("<svg/>");
                QDir().mkpath(target + "/inside");
            });
        });
        QVERIFY2(error.startsWith("cannot write " + target), qPrintable(error));
        QCOMPARE(entries(dir.path()), QStringList{"figure.svg"});
        QVERIFY(QFileInfo(target).isDir());
        // A folder as the target from the start is refused too, with nothing written.
        const QString pdf = target + ".pdf";
        QDir().mkpath(pdf);
        QVERIFY(!errorOf([&] {
                     render::exportFigure(pdf, ImageFormat::Pdf, sampleHeatmap(), options());
                 }).isEmpty());
        QCOMPARE(entries(dir.path()), (QStringList{"figure.svg", "figure.svg.pdf"}));
    }

    void aFailedExportKeepsTheFileThatWasThere() {
        test::ScratchDir dir;
        const QString target = dir.filePath("figure.png");
        test::writeFile(target, "the figure from yesterday");
        // Half the bytes written, then a failure.
        const QString error = errorOf([&] {
            render::writeAtomically(target, [&](QIODevice& device) {
                device.write("\x89PNG half");
                render::failExport(target, "the painter gave up");
            });
        });
        QCOMPARE(error, "cannot write " + target + ": the painter gave up");
        // A PNG too large to hold in memory, and a DPI out of range.
        QVERIFY(errorOf([&] {
                    render::exportFigure(target, ImageFormat::Png, sampleHeatmap(),
                                         options({100, 100}, 2400));
                }).contains("too large"));
        QVERIFY(
            errorOf([&] {
                render::exportFigure(target, ImageFormat::Png, sampleHeatmap(), options({4, 3}, 1));
            }).contains("DPI"));
        QVERIFY(errorOf([&] {
                    app::exportToFile(dir.filePath("f.gif"), sampleHeatmap(), {});
                }).contains("unknown extension '.gif'"));
        QCOMPARE(test::readFile(target), QByteArray("the figure from yesterday"));
        QCOMPARE(entries(dir.path()), QStringList{"figure.png"});
    }

    void fileMenuExportsTheCurrentView() {
        app::MainWindow window({});
        // Exports at this size, whatever the screen's default. Why 960 and not 900: with the
        // three-row view bar the figure at 900 is 554 px high, and its 14 px bold title's glyph
        // outlines in this process's SVG differ by 1/64 px from those of `headlight export` (a
        // font-engine difference between the two processes not yet tracked down), so reproduce
        // reports "differs"; at 16 px they agree.
        window.resize(1440, 960);
        window.show();
        openBert(window);
        QAction* figure = fileAction(window.menuBar(), "exportFigure");
        QAction* data = fileAction(window.menuBar(), "exportData");
        QVERIFY(figure && data);
        QCOMPARE(figure->shortcut(), QKeySequence("Ctrl+E"));
        auto* exports = window.findChild<app::ExportActions*>("exportActions");
        QVERIFY(exports);

        test::ScratchDir dir;
        for (const char* suffix : {".png", ".svg", ".pdf"})
            QVERIFY(exports->exportFigure(dir.filePath(QString("view") + suffix), 96));
        // The page has the view's size on screen: at 96 dpi, one pixel per pixel.
        QCOMPARE(QImage(dir.filePath("view.png")).size(), window.workspace()->figureView()->size());
        const SvgContent svg = parseSvg(test::readFile(dir.filePath("view.svg")));
        QVERIFY2(svg.texts.join(' ').contains("Model: bert"), qPrintable(svg.texts.join('|')));
        QVERIFY(
            svg.texts.join(' ').contains(window.workspace()->result()->text.section(' ', 0, 1)));
        QVERIFY2(svg.texts.join(' ').contains("Model: bert (bert, 2 layers × 4 heads)"),
                 qPrintable(svg.texts.join('|')));
        QVERIFY(svg.texts.join(' ').contains("Variant: as trained"));
        QVERIFY(exports->exportData(dir.filePath("view.csv")));
        QVERIFY(exports->exportData(dir.filePath("view.safetensors")));
        QVERIFY(render::csvWithoutComments(test::readFile(dir.filePath("view.csv")))
                    .startsWith("Query token"));
        checkWindowProvenance(window, dir);
        // The caption names the variant the view shows.
        QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
        window.workspace()->setVariant(
            QJsonDocument::fromJson(R"({"mask": {"preset": "longformer", "window": 1}})").object());
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
        QVERIFY(exports->exportFigure(dir.filePath("variant.svg"), 96));
        const QString caption =
            parseSvg(test::readFile(dir.filePath("variant.svg"))).texts.join(' ');
        QVERIFY2(caption.contains("Variant: mask.preset = longformer, mask.window = 1"),
                 qPrintable(caption));
    }

    // Every view of the window exports to PNG, SVG and PDF from File ▸ Export figure…; the views
    // of a variant's or a zoo model's internals get the variant or the checkpoint that has them.
    void everyViewExportsFromTheWindow() {
        app::MainWindow window({});
        window.resize(1440, 900); // exports at this size, whatever the screen's default
        window.show();
        auto* exports = window.findChild<app::ExportActions*>("exportActions");
        app::Workspace* workspace = window.workspace();
        test::ScratchDir dir;
        for (int i = 0; i < app::kAllViewCount; ++i) {
            const auto kind = app::ViewKind(i);
            const QString id = app::viewId(kind);
            QSignalSpy shown(workspace, &app::Workspace::resultShown);
            if (kind == app::ViewKind::MoeRouting || kind == app::ViewKind::ActPonder) {
                workspace->setText("1 5 9 13 17 21");
                window.openCheckpoint(
                    QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") +
                    (kind == app::ViewKind::MoeRouting ? "moe_top_k2" : "act_ut_post"));
            } else if (kind == app::ViewKind::KnnNeighbours) {
                window.openCheckpoint(test::goldenRoot() + "/gpt2");
                QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
                shown.clear();
                workspace->setVariant({{"knn", QJsonObject{{"datastore", HEADLIGHT_TEST_DATA
                                                            "/knn/datastore.txt"}}}});
            } else {
                if (!window.session().current() ||
                    !window.session().current()->folder.endsWith("bert")) {
                    workspace->setText("The cat sat on the mat.");
                    window.openCheckpoint(test::goldenRoot() + "/bert");
                }
                const char* spec =
                    kind == app::ViewKind::LshBuckets ? R"({"attention": {"kernel": "lsh"}})"
                    : kind == app::ViewKind::EarlyExit
                        ? R"({"early_exit": {"criterion": "saturation", "threshold": 0.5}})"
                        : "{}";
                workspace->setVariant(QJsonDocument::fromJson(spec).object());
            }
            QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
            workspace->setView(kind);
            for (const char* suffix : {".png", ".svg", ".pdf"}) {
                const QString path = dir.filePath(id + suffix);
                QVERIFY2(exports->exportFigure(path, 96), qPrintable(id + suffix));
                const QByteArray bytes = test::readFile(path);
                if (QString(suffix) == ".svg")
                    QVERIFY2(parseSvg(bytes).texts.join(' ').contains("Model: "), qPrintable(id));
                else if (QString(suffix) == ".pdf")
                    QVERIFY(bytes.startsWith("%PDF-"));
                else
                    QCOMPARE(QImage::fromData(bytes, "PNG").size(),
                             workspace->figureView()->size());
            }
            // A figure, not the note that the pass has nothing for this view.
            QVERIFY2(!parseSvg(test::readFile(dir.filePath(id + ".svg")))
                          .texts.join(' ')
                          .contains("This pass has no"),
                     qPrintable(id));
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), app::kAllViewCount * 3);
    }

    void fileDialogHasFiltersAndADpiChoice() {
        app::MainWindow window({});
        window.resize(1440, 900); // exports at this size, whatever the screen's default
        window.show();
        openBert(window);
        fileAction(window.menuBar(), "exportFigure")->trigger();
        QFileDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window.findChild<QFileDialog*>("exportDialog")) != nullptr);
        QCOMPARE(dialog->nameFilters().size(), 3);
        auto* dpi = dialog->findChild<QSpinBox*>("exportDpi");
        QVERIFY(dpi);
        QCOMPARE(dpi->value(), 200);
        dpi->setValue(48);
        test::ScratchDir dir;
        dialog->selectFile(dir.filePath("chosen")); // no extension: the PNG filter's is added
        static_cast<QDialog*>(dialog)->accept();    // QFileDialog::accept is protected
        QTRY_VERIFY(QFileInfo::exists(dir.filePath("chosen.png")));
        const QSize view = window.workspace()->figureView()->size();
        QCOMPARE(QImage(dir.filePath("chosen.png")).size(), view / 2);
    }

    void unwritablePathShowsTheErrorDialog() {
        app::MainWindow window({});
        window.resize(1440, 900); // exports at this size, whatever the screen's default
        window.show();
        openBert(window);
        auto* exports = window.findChild<app::ExportActions*>("exportActions");
        test::ScratchDir dir;
        const QString path = dir.filePath("no/such/folder/figure.pdf");
        QVERIFY(!exports->exportFigure(path, 200));
        QVERIFY(window.errorDialog());
        QVERIFY(window.errorDialog()->text().contains("figure.pdf"));
        QVERIFY2(window.errorDialog()->informativeText().contains("does not exist"),
                 qPrintable(window.errorDialog()->informativeText()));
        QVERIFY(entries(dir.path()).isEmpty());
        window.errorDialog()->close();
        QVERIFY(!exports->exportData(dir.filePath("table.png"))); // a figure format for data
        QVERIFY(window.errorDialog());
        QVERIFY(entries(dir.path()).isEmpty());
    }
};

HEADLIGHT_TEST_MAIN(TestExport)
#include "test_export.moc"
