// What a reviewer noticed in exported figures (issue 23 §4), each checked on the figure itself:
// the model named in the caption when --model ends in a slash, "1 layer" (not "1 layers"), ACT
// cells of halted tokens hatched and named in the legend instead of drawn as a probability of 0,
// value-axis tick labels clear of the axis title at 600×400 and 1600×1100, thinned labels at a
// round step, a funnel layer's pooled query rows labelled with every token of their group, the
// ACT view's colour bar as tall as its plot at 600×400, and an empty figure's wrapped message laid
// out like every other line (fallback fonts, outlines in SVG).
#include "counted.h"
#include "figure_builders.h"
#include "figures/figure_style.h"
#include "figures/text_line.h"
#include "forward_runner.h"
#include "routing_figures.h"
#include "sparsity_figure.h"
#include "temp_files.h"
#include "zoo_models.h"

#include <QBuffer>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgGenerator>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {

std::shared_ptr<app::ForwardResult> pass(const QString& folder, const QString& text,
                                         const variants::VariantSpec& variant = {}) {
    const std::shared_ptr<const app::LoadedModel> model =
        app::loadCheckpoint(folder, chooseBackend(BackendKind::Cpu), {});
    auto result = app::runForwardPass(model, text, variant, {.extras = {.vanillaPass = true}});
    if (!result->error.isEmpty()) qFatal("%s", qPrintable(result->error));
    return result;
}

QString zooCase(const char* name) {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") + name;
}

const QList<QSizeF> kReviewSizes = {{600, 400}, {1600, 1100}};

QString boxText(const QRectF& r) {
    return QStringLiteral("(%1, %2, %3 × %4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}
} // namespace

class TestFigureReview : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // `--model resources/models/ut_act/` named the model "" in the caption; ut_act has one layer.
    void captionNamesAModelGivenWithATrailingSlash() {
        test::ScratchDir dir;
        const QString out = dir.filePath("act.svg");
        const test::CliResult run =
            test::runHeadlight({"export", "--model", test::zooModelsRoot() + "/ut_act/", "--text",
                                "1 5 9 13", "--view", "heatmap", "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QString svg = QString::fromUtf8(test::readFile(out));
        QVERIFY2(svg.contains("Model: ut_act ("), qPrintable(svg.left(400)));
        QVERIFY(svg.contains(", 1 layer × "));
        QVERIFY(!svg.contains("1 layers"));
    }

    void countsAreSingularForOne() {
        QCOMPARE(app::counted(1, "layer"), QString("1 layer"));
        QCOMPARE(app::counted(0, "layer"), QString("0 layers"));
        QCOMPARE(app::counted(12, "head"), QString("12 heads"));
    }

    // A token that halted after N steps has no probability at steps N+1…: those cells are
    // hatched (white page and grey lines, never the colour map's 0) and the key says "halted".
    void actHaltedCellsAreHatchedAndNamed() {
        const auto result = pass(zooCase("act_ut_post"), "1 5 9 13 17 21 25");
        const render::PanelsFigure f = app::actPonderFigure(*result, {});
        const auto& halting = std::get<render::HeatmapFigure>(f.panels[0]);
        const Tensor& ponder = result->internals.at("ponder");
        const Tensor& remainder = result->internals.at("remainder");
        int halted = 0;
        for (int t = 0; t < halting.cols; ++t) {
            const int steps = int(std::lround(ponder.data()[t] - remainder.data()[t]));
            for (int step = 0; step < halting.rows; ++step) {
                const bool absent = step >= steps;
                QCOMPARE(bool(halting.absent[std::size_t(step * halting.cols + t)]), absent);
                halted += absent;
            }
        }
        QVERIFY2(halted > 0, "no token halted before the last step: the check sees nothing");
        QCOMPARE(halting.absentLabel, QString("halted"));

        const QRectF bounds(0, 0, 800, 500);
        QImage image(bounds.size().toSize(), QImage::Format_RGB32);
        QPainter painter(&image);
        render::paintHeatmap(painter, bounds, halting);
        painter.end();
        const render::HeatmapLayout layout = render::layoutHeatmap(bounds, halting);
        const QColor zero = render::colorAt(halting.colorBar.map, 0.0);
        for (int step = 0; step < halting.rows; ++step)
            for (int t = 0; t < halting.cols; ++t) {
                if (!render::heatmapCellAbsent(halting, step, t)) continue;
                const QRect cell = render::heatmapCellRect(layout, halting, step, t)
                                       .toAlignedRect()
                                       .adjusted(2, 2, -2, -2);
                bool page = false, hatch = false;
                for (int y = cell.top(); y <= cell.bottom(); ++y)
                    for (int x = cell.left(); x <= cell.right(); ++x) {
                        const QColor c = image.pixelColor(x, y);
                        QVERIFY(c != zero);
                        page |= c == render::style::kPage;
                        hatch |= c.red() < 230;
                    }
                QVERIFY(page && hatch);
            }
        QVERIFY(!layout.absentKey.isEmpty());
        QVERIFY(bounds.contains(layout.absentKey));
        QVERIFY(!layout.absentKey.intersects(layout.colorBar));
    }

    // The value axis' title sits left of its tick labels, never over them ("Share of pairs
    // allowed" was drawn over "0.25"), in every bar panel of the sparsity view at both sizes.
    void valueAxisTitleClearsTheTickLabels() {
        const auto result = pass(test::zooModelsRoot() + "/pre_ln", "The cat sat on the mat.");
        const render::PanelsFigure f = app::sparsityFigure(*result, {});
        for (const QSizeF size : kReviewSizes) {
            const render::PanelsLayout panels = render::layoutPanels(QRectF({0, 0}, size), f);
            int bars = 0;
            for (std::size_t i = 0; i < f.panels.size(); ++i) {
                const auto* chart = std::get_if<render::BarChartFigure>(&f.panels[i]);
                if (!chart) continue;
                ++bars;
                const render::BarChartLayout l = render::layoutBarChart(panels.cells[i], *chart);
                for (const QRectF& tick : render::barChartTickLabels(l, *chart)) {
                    QVERIFY2(!tick.intersects(l.valueAxisTitle),
                             qPrintable(boxText(tick) + " meets " + boxText(l.valueAxisTitle)));
                    QVERIFY(tick.right() < l.plot.left());
                }
            }
            QVERIFY(bars >= 1);
        }
    }

    // Thinned labels skip by a round step (every 5th, 10th…), so the labels drawn are evenly
    // spaced and their positions easy to count: 3 or 7 read as labels missing at random.
    void thinnedLabelsSkipByARoundStep() {
        QCOMPARE(render::labelStep(20.0, 15.0), 1);
        QCOMPARE(render::labelStep(10.0, 15.0), 2);
        QCOMPARE(render::labelStep(10.0, 25.0), 5); // 3 would do
        QCOMPARE(render::labelStep(2.0, 15.0), 10); // 8 would do
        QCOMPARE(render::labelStep(1.0, 110.0), 200);
    }

    // A funnel layer's query rows are one per pooled query: labelled with all of its tokens.
    // The halted key sat in the colour bar's column and cut the bar to two thirds of the plot's
    // height at 600×400; now the bar spans the plot and the key sits under it, inside the panel.
    void actColourBarSpansItsPlot() {
        const auto result = pass(zooCase("act_ut_post"), "1 5 9 13 17 21 25");
        const render::PanelsFigure f = app::actPonderFigure(*result, {});
        for (const QSizeF size : kReviewSizes) {
            const render::PanelsLayout panels = render::layoutPanels(QRectF(QPointF(), size), f);
            const QRectF cell = panels.cells[0];
            const auto& halting = std::get<render::HeatmapFigure>(f.panels[0]);
            const render::HeatmapLayout layout = render::layoutHeatmap(cell, halting);
            QCOMPARE(layout.colorBar.top(), layout.plot.top());
            QCOMPARE(layout.colorBar.bottom(), layout.plot.bottom());
            QVERIFY2(cell.contains(layout.absentKey), qPrintable(boxText(layout.absentKey)));
            QVERIFY(layout.absentKey.top() > layout.plot.bottom());
            QVERIFY(!layout.absentKey.intersects(layout.plot));
            QVERIFY(!layout.absentKey.intersects(layout.colAxisTitle));
            QImage image(size.toSize(), QImage::Format_RGB32);
            image.fill(Qt::white);
            QPainter painter(&image);
            render::paintPanels(painter, QRectF(QPointF(), size), f);
            painter.end();
            // Painted: the colour map's 0 just above the plot's bottom and its 0.9 a tenth of the
            // plot below its top, in the bar's strip (right of the plot).
            const auto stripHas = [&](double y, double value) {
                const QColor want = render::colorAt(halting.colorBar.map, value);
                for (int x = int(layout.colorBar.left()); x < int(layout.colorBar.left()) + 40;
                     ++x) {
                    const QColor c = image.pixelColor(x, int(y));
                    if (std::abs(c.red() - want.red()) + std::abs(c.green() - want.green()) +
                            std::abs(c.blue() - want.blue()) <
                        30)
                        return true;
                }
                return false;
            };
            QVERIFY(stripHas(layout.plot.bottom() - 3, 0.0));
            QVERIFY(stripHas(layout.plot.top() + 0.1 * layout.plot.height(), 0.9));
        }
    }

    // An empty figure's message wraps into centred lines drawn through QTextLayout: Chinese and
    // Arabic words come out in their fallback fonts with no empty box, inside the figure, and an
    // SVG holds the glyphs as outlines (a fill of the message's colour), as single lines do.
    void wrappedMessagesAreLaidOutLikeLines() {
        const QString message =
            QStringLiteral("注意力机制是Transformer的核心。 Nothing to show for "
                           "this text: مرحبا بالعالم and more words to wrap");
        const QRectF bounds(0, 0, 300, 240);
        QImage image(bounds.size().toSize(), QImage::Format_RGB32);
        QPainter painter(&image);
        render::paintMessage(painter, bounds, message);
        const QFont font = painter.font();
        painter.end();
        image.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/wrapped_message.png");
        for (const QString& word : message.split(' '))
            QCOMPARE(render::missingGlyphs(font, word), 0);
        // Rows with ink form several bands (lines), all inside the margin.
        int bands = 0;
        bool inked = false;
        QRect ink;
        for (int y = 0; y < image.height(); ++y) {
            bool row = false;
            for (int x = 0; x < image.width(); ++x)
                if (image.pixelColor(x, y) != render::style::kPage) {
                    row = true;
                    ink |= QRect(x, y, 1, 1);
                }
            bands += row && !inked;
            inked = row;
        }
        QVERIFY2(bands >= 3, qPrintable(QString::number(bands)));
        QVERIFY2(bounds.adjusted(23, 23, -23, -23).contains(QRectF(ink)),
                 qPrintable(boxText(QRectF(ink))));
        QVERIFY(std::abs(ink.center().x() - bounds.center().x()) < 12); // centred lines

        QBuffer svg;
        svg.open(QIODevice::WriteOnly);
        QSvgGenerator generator;
        generator.setOutputDevice(&svg);
        generator.setSize(bounds.size().toSize());
        generator.setViewBox(bounds);
        QPainter svgPainter(&generator);
        render::paintMessage(svgPainter, bounds, message);
        svgPainter.end();
        QVERIFY2(svg.data().contains("fill=\"" + render::style::kMutedInk.name().toLatin1() + "\""),
                 svg.data().left(600).constData());
    }

    void pooledRowsAreLabelledWithTheirGroup() {
        const auto result = pass(zooCase("funnel_encoder_2x2"), "1 5 9 13 17 21 25 29 33");
        for (int layer = 0; layer < 4; ++layer) {
            app::ViewState state;
            state.layer = layer;
            const auto heatmap = std::get<render::HeatmapFigure>(
                app::buildFigure(app::ViewKind::Heatmap, result.get(), state));
            const std::vector<render::RowLabel> labels = render::heatmapRowLabels(heatmap);
            if (layer < 2) {
                QVERIFY(heatmap.rowGroups.empty());
                QCOMPARE(int(labels.size()), result->tokenCount());
                continue;
            }
            QVERIFY(heatmap.rowAxis.contains("pooled"));
            QCOMPARE(int(labels.size()), int(result->internals.at("funnel_length").data()[layer]));
            int row = 0;
            for (const render::RowLabel& label : labels) {
                QCOMPARE(label.first, row);
                QVERIFY(label.count >= 1);
                QCOMPARE(label.text, result->tokens.mid(row, label.count).join(QString()));
                row += label.count;
            }
            QCOMPARE(row, result->tokenCount());
            QVERIFY(labels.front().count >= 2);
        }
    }
};

HEADLIGHT_TEST_MAIN(TestFigureReview)
#include "test_figure_review.moc"
