// The figure paint functions, rendered into images and read back pixel by pixel: colormap
// endpoints against matplotlib's and ColorBrewer's published tables, the heatmap's largest cell
// in the colormap's top colour, colour bars, the selected head's outline in the model grid,
// token lines that darken with weight, violins at the right height in the right threshold colour,
// and the diverging difference map.
#include "figures/figure.h"

#include <QImage>
#include <QPainter>
#include <QTest>
#include <cmath>

using namespace headlight::render;

namespace {
const QRectF kBounds(0, 0, 900, 640);

QImage paint(const Figure& figure, QRectF bounds = kBounds) {
    QImage image(bounds.size().toSize(), QImage::Format_RGB32);
    image.fill(Qt::black);
    QPainter painter(&image);
    paintFigure(painter, bounds, figure);
    return image;
}

bool near(QRgb a, QColor b, int tolerance = 2) {
    return std::abs(qRed(a) - b.red()) <= tolerance &&
           std::abs(qGreen(a) - b.green()) <= tolerance &&
           std::abs(qBlue(a) - b.blue()) <= tolerance;
}

QString describe(QRgb p) {
    return QString("rgb(%1, %2, %3)").arg(qRed(p)).arg(qGreen(p)).arg(qBlue(p));
}

QRgb at(const QImage& image, QPointF p) {
    return image.pixel(p.toPoint());
}

// 4 × 4, one clear maximum at (row 2, col 1); zero elsewhere on row 0.
HeatmapFigure sampleHeatmap() {
    HeatmapFigure f;
    f.title = "test";
    f.rows = f.cols = 4;
    f.values = {0.0f,  0.0f, 0.0f,  0.0f, 0.1f,  0.2f,  0.3f,  0.4f,
                0.05f, 0.9f, 0.05f, 0.0f, 0.25f, 0.25f, 0.25f, 0.25f};
    f.rowLabels = f.colLabels = {"the", "cat", "sat", "down"};
    f.rowAxis = "Query token";
    f.colAxis = "Key token";
    f.colorBar = {Colormap::Viridis, 0.0, 0.9, "Attention weight"};
    return f;
}
} // namespace

class TestFigures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void colormapEndpointsMatchPublishedTables() {
        // matplotlib _viridis_data[0] and [255], _cividis_data[0] and [255].
        QCOMPARE(colorAt(Colormap::Viridis, 0.0).rgb(),
                 QColor::fromRgbF(0.267004f, 0.004874f, 0.329415f).rgb());
        QCOMPARE(colorAt(Colormap::Viridis, 1.0).rgb(),
                 QColor::fromRgbF(0.993248f, 0.906157f, 0.143936f).rgb());
        QCOMPARE(colorAt(Colormap::Cividis, 0.0).rgb(),
                 QColor::fromRgbF(0.0f, 0.135112f, 0.304751f).rgb());
        QCOMPARE(colorAt(Colormap::Cividis, 1.0).rgb(),
                 QColor::fromRgbF(0.995737f, 0.909344f, 0.217772f).rgb());
        QCOMPARE(colorAt(Colormap::Viridis, 0.0).rgb(), qRgb(68, 1, 84));
        QCOMPARE(colorAt(Colormap::Viridis, 1.0).rgb(), qRgb(253, 231, 37));
        // _viridis_data[128] is sample 16 of 32, so t = 0.5 hits it exactly.
        QVERIFY(near(colorAt(Colormap::Viridis, 0.5).rgb(),
                     QColor::fromRgbF(0.127568f, 0.566949f, 0.550556f), 1));
        // RdBu reversed: #053061 (blue) at the low end, #f7f7f7 at 0.5, #67001f (red) at the top.
        QCOMPARE(colorAt(Colormap::Diverging, 0.0).rgb(), qRgb(0x05, 0x30, 0x61));
        QCOMPARE(colorAt(Colormap::Diverging, 0.5).rgb(), qRgb(0xf7, 0xf7, 0xf7));
        QCOMPARE(colorAt(Colormap::Diverging, 1.0).rgb(), qRgb(0x67, 0x00, 0x1f));
        // Out of range clamps; NaN gives the low end rather than garbage.
        QCOMPARE(colorAt(Colormap::Viridis, 3.0).rgb(), colorAt(Colormap::Viridis, 1.0).rgb());
        QCOMPARE(colorAt(Colormap::Viridis, -1.0).rgb(), colorAt(Colormap::Viridis, 0.0).rgb());
        QCOMPARE(colorAt(Colormap::Viridis, std::nan("")).rgb(),
                 colorAt(Colormap::Viridis, 0.0).rgb());
    }

    void heatmapLargestCellHasTheTopColour() {
        const HeatmapFigure f = sampleHeatmap();
        const QImage image = paint(f);
        const HeatmapLayout layout = layoutHeatmap(kBounds, f);
        QVERIFY(layout.plot.width() > 100 && layout.plot.height() > 100);
        // Probe near a cell's corner: the centre holds the printed value.
        const auto probe = [&](int r, int c) {
            return heatmapCellRect(layout, f, r, c).topLeft() + QPointF(4, 4);
        };
        QVERIFY2(near(at(image, probe(2, 1)), colorAt(Colormap::Viridis, 1.0)),
                 qPrintable(describe(at(image, probe(2, 1)))));
        QVERIFY(near(at(image, probe(0, 0)), colorAt(Colormap::Viridis, 0.0)));
        QVERIFY(near(at(image, probe(3, 2)), colorAt(Colormap::Viridis, 0.25 / 0.9)));
        // Hit-testing agrees with painting.
        const auto cell = heatmapCellAt(layout, f, heatmapCellRect(layout, f, 2, 1).center());
        QVERIFY(cell);
        QCOMPARE(cell->first, 2);
        QCOMPARE(cell->second, 1);
        QVERIFY(!heatmapCellAt(layout, f, QPointF(2, 2)));
    }

    void heatmapHasAColourBarFromLowToHigh() {
        const HeatmapFigure f = sampleHeatmap();
        const QImage image = paint(f);
        const HeatmapLayout layout = layoutHeatmap(kBounds, f);
        QVERIFY(layout.colorBar.left() >= layout.plot.right());
        const double x = layout.colorBar.left() + kLabelGap + 9; // the middle of the bar's strip
        QVERIFY2(
            near(at(image, {x, layout.colorBar.top() + 3}), colorAt(Colormap::Viridis, 1.0), 6),
            qPrintable(describe(at(image, {x, layout.colorBar.top() + 3}))));
        QVERIFY(
            near(at(image, {x, layout.colorBar.bottom() - 3}), colorAt(Colormap::Viridis, 0.0), 6));
        QVERIFY(
            near(at(image, {x, layout.colorBar.center().y()}), colorAt(Colormap::Viridis, 0.5), 6));
    }

    void heatmapOutlinesTheEmphasisedRow() {
        HeatmapFigure f = sampleHeatmap();
        f.emphasisedRow = 1;
        const QImage image = paint(f);
        const HeatmapLayout layout = layoutHeatmap(kBounds, f);
        const QRectF row = heatmapCellRect(layout, f, 1, 2);
        QVERIFY2(near(at(image, {row.center().x(), row.top() - 1}), style::kAccent, 10),
                 qPrintable(describe(at(image, {row.center().x(), row.top() - 1}))));
        QVERIFY(!near(at(image, {row.center().x(), heatmapCellRect(layout, f, 3, 2).top() - 1}),
                      style::kAccent, 10));
    }

    void crowdedColumnLabelsTurnAndThin() {
        QStringList labels;
        for (int i = 0; i < 200; ++i)
            labels << QString("token%1").arg(i);
        const QFont font = figureFont(kBounds, TextRole::Label);
        QVERIFY(columnLabelsRotate(QRectF(0, 0, 600, 600), labels, font));
        QVERIFY(!columnLabelsRotate(QRectF(0, 0, 600, 600), labels.mid(0, 4), font));
        QVERIFY(labelStep(3.0, fontHeight(font)) > 1);
        QCOMPARE(labelStep(40.0, fontHeight(font)), 1);
    }

    void differenceMapIsSymmetricAndDiverging() {
        HeatmapFigure f = sampleHeatmap();
        f.values = {-0.5f, 0.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
                    0.0f,  0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        f.colorBar = {Colormap::Diverging, -0.5, 0.5, "A − B"};
        const QImage image = paint(f);
        const HeatmapLayout layout = layoutHeatmap(kBounds, f);
        const auto probe = [&](int r, int c) {
            return heatmapCellRect(layout, f, r, c).topLeft() + QPointF(4, 4);
        };
        QVERIFY(near(at(image, probe(0, 0)), QColor(0x05, 0x30, 0x61))); // most negative: blue
        QVERIFY(near(at(image, probe(0, 2)), QColor(0x67, 0x00, 0x1f))); // most positive: red
        QVERIFY(near(at(image, probe(0, 1)), QColor(0xf7, 0xf7, 0xf7))); // zero: neutral
    }

    void modelGridOutlinesTheSelectedHead() {
        ModelGridFigure f;
        f.layers = 2;
        f.heads = 3;
        f.tokens = 2;
        f.attention.assign(2 * 3 * 2 * 2, 0.5f);
        f.attention[(1 * 3 + 2) * 4 + 0] = 1.0f; // layer 1, head 2, query 0, key 0
        f.colorBar = {Colormap::Viridis, 0.0, 1.0, "Attention weight"};
        f.selectedLayer = 1;
        f.selectedHead = 2;
        const QImage image = paint(f);
        const ModelGridLayout layout = layoutModelGrid(kBounds, f);
        const QRectF cell = modelGridCellRect(layout, 1, 2);
        QVERIFY(near(at(image, cell.topLeft() + QPointF(cell.width() / 4, cell.height() / 4)),
                     colorAt(Colormap::Viridis, 1.0)));
        QVERIFY(near(at(image, cell.center() + QPointF(cell.width() / 4, cell.height() / 4)),
                     colorAt(Colormap::Viridis, 0.5)));
        const QPointF edge(cell.center().x(), cell.top() - std::min(layout.gap / 2, 3.0));
        QVERIFY2(near(at(image, edge), style::kAccent, 10), qPrintable(describe(at(image, edge))));
        const QRectF other = modelGridCellRect(layout, 0, 0);
        QVERIFY(!near(at(image, {other.center().x(), other.top() - std::min(layout.gap / 2, 3.0)}),
                      style::kAccent, 10));
        const auto hit = modelGridCellAt(layout, f, modelGridCellRect(layout, 0, 1).center());
        QVERIFY(hit && hit->first == 0 && hit->second == 1);
    }

    void tokenLinesDarkenWithWeight() {
        TokenLinesFigure f;
        f.tokens = {"a", "b", "c"};
        // query 0 -> key 2 with everything; query 2 -> key 0 with nothing.
        f.weights = {0.0f, 0.0f, 1.0f, 0.5f, 0.5f, 0.0f, 0.0f, 0.0f, 1.0f};
        f.colorBar = {Colormap::Blues, 0.0, 1.0, "Attention weight"};
        const QImage image = paint(f);
        const TokenLinesLayout layout = layoutTokenLines(kBounds, f);
        const auto middle = [&](int q, int k) {
            return (queryAnchor(layout, q) + keyAnchor(layout, k)) / 2;
        };
        const QRgb strong = at(image, middle(0, 2));
        const QRgb half = at(image, middle(1, 0) * 0.5 + queryAnchor(layout, 1) * 0.5);
        QVERIFY2(qGray(strong) < 90, qPrintable(describe(strong)));
        QVERIFY2(qGray(half) > qGray(strong), qPrintable(describe(half)));
        // A zero weight draws nothing: the page shows through beside query 2's horizontal line.
        const QPointF empty = queryAnchor(layout, 2) * 0.7 + keyAnchor(layout, 0) * 0.3;
        QVERIFY2(near(at(image, empty), style::kPage, 3), qPrintable(describe(at(image, empty))));
    }

    void thresholdColoursFollowTheRealFormerBands() {
        const Thresholds entropy = realFormerColors(1.5, 4.5);
        QCOMPARE(thresholdColor(1.49, entropy), entropy.colors[0]);
        QCOMPARE(thresholdColor(1.5, entropy), entropy.colors[1]);
        QCOMPARE(thresholdColor(4.5, entropy), entropy.colors[1]);
        QCOMPARE(thresholdColor(4.51, entropy), entropy.colors[2]);
        const Thresholds jsd = realFormerColors(0.25, 0.75);
        QCOMPARE(thresholdColor(0.1, jsd), QColor(0, 114, 178));
        QCOMPARE(thresholdColor(0.5, jsd), QColor(240, 228, 66));
        QCOMPARE(thresholdColor(0.9, jsd), QColor(213, 94, 0));
    }

    void violinsSitAtTheirValuesInTheirBandColour() {
        ViolinFigure f;
        f.valueAxis = "Entropy (nats)";
        for (int i = 0; i <= 100; ++i)
            f.grid.push_back(float(i) * 0.06f); // 0 .. 6 nats
        const auto bump = [&](float centre) {
            std::vector<float> d;
            for (float x : f.grid)
                d.push_back(std::exp(-0.5f * (x - centre) * (x - centre) / 0.09f));
            return d;
        };
        ViolinPanel panel;
        panel.title = "Layer 0";
        panel.violins = {{0, 0.8f, 1.0f, 1.2f, bump(1.0f)},
                         {1, 2.8f, 3.0f, 3.2f, bump(3.0f)},
                         {2, 4.8f, 5.0f, 5.2f, bump(5.0f)}};
        f.panels = {panel};
        f.thresholds = realFormerColors(1.5, 4.5);
        f.minValue = 0.0;
        f.maxValue = 6.0;
        const QImage image = paint(f);
        const ViolinLayout layout = layoutViolins(kBounds, f);
        QCOMPARE(int(layout.panels.size()), 1);
        const QRectF plot = layout.panels[0];
        const QColor expected[] = {QColor(0, 114, 178), QColor(240, 228, 66), QColor(213, 94, 0)};
        for (int i = 0; i < 3; ++i) {
            const double x = violinCenterX(plot, panel, i);
            const double centre = 1.0 + 2.0 * i;
            // Widest at its centre value (just off the median marker), in its band's colour ...
            const QPointF body(x + 12, violinValueY(plot, f, centre));
            QVERIFY2(near(at(image, body), expected[i], 3),
                     qPrintable(QString("violin %1: %2").arg(i).arg(describe(at(image, body)))));
            // ... and absent one nat away, where the density is e^(-5.6) of its peak.
            const QPointF away(x + 12, violinValueY(plot, f, centre + 1.0));
            QVERIFY2(!near(at(image, away), expected[i], 30),
                     qPrintable(describe(at(image, away))));
        }
        // The threshold bar beside the first panel is blue at the bottom and red at the top.
        const double bx = layout.colorBar.left() + kLabelGap + 9;
        QVERIFY(near(at(image, {bx, layout.colorBar.bottom() - 3}), expected[0], 2));
        QVERIFY(near(at(image, {bx, layout.colorBar.top() + 3}), expected[2], 2));
    }

    void emptyFigureSaysWhy() {
        const QImage image = paint(EmptyFigure{"Type some text"});
        QVERIFY(near(image.pixel(5, 5), style::kPage, 0));
        int ink = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                ink += qGray(image.pixel(x, y)) < 160;
        QVERIFY(ink > 50);
    }
};

HEADLIGHT_TEST_MAIN(TestFigures)
#include "test_figures.moc"
