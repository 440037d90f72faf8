// Text beyond Latin, Greek and Cyrillic (issue 23): Chinese, Japanese, Korean, Arabic and Hindi
// in figure text, the window's token strip, and PNG, SVG and PDF export. For each script: no
// .notdef glyph (glyph index 0 in the runs QTextLayout shapes, fallback fonts included, the same
// runs every device draws), and no clipped line (the ink of a line drawn into the box its own
// metrics asked for lies inside that box, on the screen, in a PNG's caption and in an SVG whose
// glyphs are outlines). The PDF embeds a subset of each font it uses.
#include "export/figure_export.h"
#include "figures/figure_style.h"
#include "temp_files.h"
#include "token_strip.h"

#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSet>
#include <QSvgRenderer>
#include <QTest>

using namespace headlight;

namespace {

struct Sample {
    const char* script;
    QString text;
};

// The first is the user report's sentence (a Llama-3-tokenizer model); the others say the same.
QList<Sample> samples() {
    return {{"Chinese", QStringLiteral("注意力机制是Transformer的核心。")},
            {"Japanese", QStringLiteral("注意機構はトランスフォーマーの核心です。")},
            {"Korean", QStringLiteral("어텐션은 트랜스포머의 핵심이다.")},
            {"Arabic", QStringLiteral("آلية الانتباه هي جوهر المحوّل.")},
            {"Hindi", QStringLiteral("ध्यान तंत्र ट्रांसफ़ॉर्मर का मूल है।")},
            {"Latin descenders", QStringLiteral("Model: pre_ln · gpy jq")}};
}

void addSampleRows() {
    QTest::addColumn<QString>("text");
    for (const Sample& sample : samples())
        QTest::newRow(sample.script) << sample.text;
}

// Tokens as a byte-level BPE would cut a sentence: runs of two or three characters.
QStringList tokensOf(const QString& text) {
    QStringList tokens;
    for (qsizetype i = 0; i < text.size(); i += 3)
        tokens << text.mid(i, 3);
    return tokens;
}

// The smallest rectangle holding every pixel that differs from `background`.
QRect inkBox(const QImage& image, QColor background, const QRect& within) {
    QRect box;
    for (int y = within.top(); y <= within.bottom(); ++y)
        for (int x = within.left(); x <= within.right(); ++x)
            if (image.pixelColor(x, y) != background) box |= QRect(x, y, 1, 1);
    return box;
}

QImage whitePage(QSize size) {
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    return image;
}

render::HeatmapFigure tokenHeatmap(const QString& text) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Attention · %1").arg(text.left(6));
    f.rowLabels = f.colLabels = tokensOf(text);
    f.rows = f.cols = int(f.rowLabels.size());
    for (int i = 0; i < f.rows * f.cols; ++i)
        f.values.push_back(float(i % 5) / 5.0f);
    f.rowAxis = QStringLiteral("Query token");
    f.colAxis = QStringLiteral("Key token");
    f.colorBar = {render::Colormap::Viridis, 0.0, 1.0, QStringLiteral("Attention weight")};
    return f;
}

render::ExportOptions captioned(const QString& text) {
    render::ExportOptions o;
    o.inches = {6.0, 4.0};
    o.dpi = 96;
    o.caption = {QStringLiteral("pre_ln"), QStringLiteral("vanilla"), text};
    return o;
}

// The whole page is 1 unit = 1 pixel at 96 DPI, so layout boxes are pixel boxes.
QRect captionBox(const QString& text) {
    const render::ExportOptions o = captioned(text);
    const QRectF page(QPointF(0, 0), o.inches * render::kLayoutDpi);
    return render::captionRect(page, render::captionLine(o.caption)).toAlignedRect();
}

// The band under the figure body: from the caption's top down to the page's bottom.
QRect captionBand(const QString& text, const QImage& image) {
    const QRect caption = captionBox(text);
    return QRect(0, caption.top() - 3, image.width(), image.height() - caption.top() + 3);
}

QStringList svgTexts(const QByteArray& svg) {
    QStringList texts;
    static const QRegularExpression element(QStringLiteral("<text[^>]*>([^<]*)</text>"));
    for (const QRegularExpressionMatch& m : element.globalMatch(QString::fromUtf8(svg)))
        texts << m.captured(1);
    return texts;
}

QImage renderSvg(const QByteArray& svg, QSize size) {
    QSvgRenderer renderer(svg);
    QImage image = whitePage(size);
    QPainter painter(&image);
    renderer.render(&painter);
    return image;
}
} // namespace

class TestWorldScripts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyScriptHasItsGlyphs_data() { addSampleRows(); }
    void everyScriptHasItsGlyphs() {
        QFETCH(QString, text);
        const QRectF bounds(0, 0, 800, 500);
        for (const auto role :
             {render::TextRole::Title, render::TextRole::Label, render::TextRole::Tick}) {
            QFont font = render::figureFont(bounds, role);
            QCOMPARE(render::missingGlyphs(font, text), 0);
            font.setBold(true); // emphasised labels
            QCOMPARE(render::missingGlyphs(font, text), 0);
        }
    }

    // The check above can fail: a code point no installed font has shows as .notdef.
    void aCharacterWithoutAFontIsCountedMissing() {
        const QFont font = render::figureFont(QRectF(0, 0, 800, 500), render::TextRole::Label);
        QCOMPARE(render::missingGlyphs(font, QString::fromUcs4(U"a\U0010FFFDb")), 1);
    }

    // Figures keep what they measure per font and text (text_cache.h): a kept width is the font's
    // own, asked again or after the same text in another size or weight.
    void keptWidthsAreEachFontsOwn_data() { addSampleRows(); }
    void keptWidthsAreEachFontsOwn() {
        QFETCH(QString, text);
        const QFont label = render::figureFont(QRectF(0, 0, 800, 500), render::TextRole::Label);
        QFont bold = label;
        bold.setBold(true);
        const QFont title = render::figureFont(QRectF(0, 0, 1600, 1000), render::TextRole::Title);
        for (int round = 0; round < 2; ++round)
            for (const QFont& font : {label, bold, title}) {
                QCOMPARE(render::textWidth(font, text),
                         QFontMetricsF(font).horizontalAdvance(text));
                QCOMPARE(render::widestText(font, {text, QString()}),
                         QFontMetricsF(font).horizontalAdvance(text));
            }
        QVERIFY(render::textWidth(bold, text) != render::textWidth(title, text));
    }

    void aLineFitsTheBoxItsMetricsAskFor_data() { addSampleRows(); }
    void aLineFitsTheBoxItsMetricsAskFor() {
        QFETCH(QString, text);
        QFont font = render::figureFont(QRectF(0, 0, 800, 500), render::TextRole::Label);
        const double height = render::lineHeight(font, text);
        QVERIFY(height >= QFontMetricsF(font).height());
        const QRect box(20, 30, 760, int(std::ceil(height)));
        QImage image = whitePage({800, 100});
        {
            QPainter painter(&image);
            painter.setFont(font);
            painter.setPen(Qt::black);
            render::drawTextLine(painter, box, Qt::AlignLeft, text);
        }
        const QRect ink = inkBox(image, Qt::white, image.rect());
        QVERIFY2(!ink.isEmpty(), "nothing drawn");
        QVERIFY2(box.contains(ink), qPrintable(QStringLiteral("ink %1,%2 %3×%4 outside the box")
                                                   .arg(ink.x())
                                                   .arg(ink.y())
                                                   .arg(ink.width())
                                                   .arg(ink.height())));
    }

    // Right to left: the Arabic part of a mixed line is laid out as a right-to-left run (bidi
    // over the whole string) and shaped, its letters joined.
    void arabicRunsRightToLeft() {
        const QFont font = render::figureFont(QRectF(0, 0, 800, 500), render::TextRole::Label);
        const QString word = QStringLiteral("جوهر");
        bool rightToLeft = false, leftToRight = false;
        for (const QGlyphRun& run : render::glyphRunsOf(font, QStringLiteral("Text: ") + word))
            (run.isRightToLeft() ? rightToLeft : leftToRight) = true;
        QVERIFY(rightToLeft && leftToRight);
        // Joining: the first letter inside the word is not drawn with its isolated glyph.
        const quint32 isolated = render::glyphRunsOf(font, word.left(1)).front().glyphIndexes()[0];
        const QList<quint32> joined = render::glyphRunsOf(font, word).front().glyphIndexes();
        QVERIFY(!joined.contains(isolated));
    }

    void tokenStripShowsEveryScript_data() { addSampleRows(); }
    void tokenStripShowsEveryScript() {
        QFETCH(QString, text);
        app::TokenStrip strip;
        strip.resize(900, 200);
        strip.setTokens(tokensOf(text));
        strip.resize(900, strip.heightForWidth(900));
        const QImage shot = strip.grab().toImage().convertToFormat(QImage::Format_RGB32);
        for (int i = 0; i < strip.tokens().size(); ++i) {
            QCOMPARE(render::missingGlyphs(strip.font(), strip.tokens()[i]), 0);
            const QRect chip = strip.chipRect(i);
            QVERIFY(chip.height() >= render::lineHeight(strip.font(), strip.tokens()[i]));
            // The chip's fill at its centre row, left edge: the text's ink is what differs from it
            // inside the chip; nothing of the text reaches the rows just inside its outline
            // (between the rounded corners).
            const QColor fill = shot.pixelColor(chip.left() + 3, chip.center().y());
            const QRect inside = chip.adjusted(7, 2, -7, -2);
            QVERIFY2(!inkBox(shot, fill, inside).isEmpty(), qPrintable(strip.tokens()[i]));
            QVERIFY(inkBox(shot, fill, QRect(inside.left(), inside.top(), inside.width(), 1))
                        .isEmpty());
            QVERIFY(inkBox(shot, fill, QRect(inside.left(), inside.bottom(), inside.width(), 1))
                        .isEmpty());
        }
    }

    void pngCaptionIsWholeInItsBox_data() { addSampleRows(); }
    void pngCaptionIsWholeInItsBox() {
        QFETCH(QString, text);
        test::ScratchDir dir;
        const QString path = dir.freshPath(".png");
        render::exportFigure(path, render::ImageFormat::Png, tokenHeatmap(text), captioned(text));
        const QImage image = QImage(path).convertToFormat(QImage::Format_RGB32);
        const QRect ink = inkBox(image, Qt::white, captionBand(text, image));
        QVERIFY(!ink.isEmpty());
        QVERIFY2(captionBox(text).adjusted(0, -1, 0, 1).contains(ink),
                 qPrintable(QStringLiteral("caption ink rows %1–%2, box %3–%4")
                                .arg(ink.top())
                                .arg(ink.bottom())
                                .arg(captionBox(text).top())
                                .arg(captionBox(text).bottom())));
        const QFont font = render::figureFont(QRectF(0, 0, 576, 384), render::TextRole::Tick);
        QCOMPARE(render::missingGlyphs(font, render::captionLine(captioned(text).caption)), 0);
    }

    // Visible glyphs are outlines: with every <text> removed the SVG draws the same pixels, so it
    // looks the same where its fonts are not installed; the <text> copies keep the words.
    void svgDrawsGlyphsAsOutlines_data() { addSampleRows(); }
    void svgDrawsGlyphsAsOutlines() {
        QFETCH(QString, text);
        test::ScratchDir dir;
        const QString path = dir.freshPath(".svg");
        render::exportFigure(path, render::ImageFormat::Svg, tokenHeatmap(text), captioned(text));
        const QByteArray svg = test::readFile(path);
        QVERIFY2(svgTexts(svg).join(' ').contains(text.left(4).toHtmlEscaped()),
                 qPrintable(svgTexts(svg).join('|')));
        const QByteArray withoutText =
            QString::fromUtf8(svg)
                .remove(QRegularExpression(QStringLiteral("<text[^>]*>[^<]*</text>")))
                .toUtf8();
        QVERIFY(withoutText.size() < svg.size());
        const QSize size(576, 384);
        const QImage full = renderSvg(svg, size), outlines = renderSvg(withoutText, size);
        QCOMPARE(outlines, full);
        const QRect ink = inkBox(outlines, Qt::white, captionBand(text, outlines));
        QVERIFY(!ink.isEmpty());
        QVERIFY(captionBox(text).adjusted(0, -1, 0, 1).contains(ink));
    }

    // Qt's PDF engine embeds each font the text is drawn with (a /FontFile2 stream each): every
    // family the layout picks for the five scripts is named as a /BaseFont.
    void pdfEmbedsTheFontsOfEveryScript() {
        test::ScratchDir dir;
        const QString path = dir.freshPath(".pdf");
        QString all;
        for (const Sample& sample : samples())
            all += sample.text + QLatin1Char(' ');
        const render::ExportOptions o = captioned(all);
        render::exportFigure(path, render::ImageFormat::Pdf, tokenHeatmap(all), o);
        const QByteArray pdf = test::readFile(path);
        const QFont font = render::figureFont(QRectF(QPointF(0, 0), o.inches * render::kLayoutDpi),
                                              render::TextRole::Tick);
        QSet<QString> families;
        for (const QGlyphRun& run : render::glyphRunsOf(font, render::captionLine(o.caption)))
            families << run.rawFont().familyName().remove(' ');
        QVERIFY2(families.size() >= 3, qPrintable(families.values().join(',')));
        for (const QString& family : families)
            QVERIFY2(pdf.contains("/BaseFont /" + family.toLatin1()), qPrintable(family));
        QVERIFY(pdf.count("/FontFile2") >= families.size());
    }
};

HEADLIGHT_TEST_MAIN(TestWorldScripts)
#include "test_world_scripts.moc"
