#include "token_strip.h"

#include "figures/figure_style.h"

#include <QFontMetrics>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr int kPadX = 8;
constexpr int kPadY = 4;
constexpr int kSpacing = 6;
constexpr int kMaxChipWidth = 220;
} // namespace

TokenStrip::TokenStrip(QWidget* parent)
    : QWidget(parent) {
    setMouseTracking(true);
    QFont chipFont = font();
    chipFont.setPixelSize(17);
    // Why the figures' families after the widget's own: tokens in any script the figures draw
    // find the same fallback fonts here, and the chips are sized from them.
    chipFont.setFamilies(QStringList(chipFont.family()) + render::figureFontFamilies());
    setFont(chipFont);
    measureChips(); // also when the font was already this one (no FontChange)
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void TokenStrip::setTokens(const QStringList& tokens) {
    // Why: a variant toggle reruns the same text, and measuring its chips again (and laying the
    // window out around them) was a good part of the window's work per toggle.
    if (tokens == tokens_) return;
    tokens_ = tokens;
    if (selected_ >= tokens_.size()) selected_ = -1;
    hovered_ = -1;
    measureChips();
    updateGeometry();
    update();
}

// Why kept: the layout asks heightForWidth several times per pass, and shaping every token each
// time (for its width and its fonts' height) cost milliseconds on a long text.
void TokenStrip::measureChips() {
    const QFontMetrics metrics(font());
    chipHeight_ = int(std::ceil(render::linesHeight(font(), tokens_))) + 2 * kPadY;
    chipWidths_.clear();
    for (const QString& token : tokens_)
        chipWidths_.push_back(
            std::min(metrics.horizontalAdvance(token) + 2 * kPadX, kMaxChipWidth));
    chips_ = layoutChips(width());
}

void TokenStrip::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange) measureChips();
    QWidget::changeEvent(event);
}

void TokenStrip::setSelected(int index) {
    const int selected = index >= 0 && index < tokens_.size() ? index : -1;
    if (selected == selected_) return; // each pass sets it again; the chips need no repaint
    selected_ = selected;
    update();
}

QRect TokenStrip::chipRect(int index) const {
    return index >= 0 && std::size_t(index) < chips_.size() ? chips_[std::size_t(index)] : QRect();
}

// Chips flow left to right and wrap; long tokens are cut at kMaxChipWidth.
std::vector<QRect> TokenStrip::layoutChips(int width) const {
    std::vector<QRect> chips;
    int x = kSpacing, y = kSpacing;
    for (const int w : chipWidths_) {
        if (x + w > width - kSpacing && x > kSpacing) {
            x = kSpacing;
            y += chipHeight_ + kSpacing;
        }
        chips.emplace_back(x, y, w, chipHeight_);
        x += w + kSpacing;
    }
    return chips;
}

int TokenStrip::heightForWidth(int width) const {
    const std::vector<QRect> chips = layoutChips(width);
    return chips.empty() ? chipHeight_ + 2 * kSpacing : chips.back().bottom() + kSpacing + 1;
}

QSize TokenStrip::sizeHint() const {
    return {600, heightForWidth(std::max(width(), 600))};
}

QSize TokenStrip::minimumSizeHint() const {
    return {200, heightForWidth(std::max(width(), 200))};
}

void TokenStrip::resizeEvent(QResizeEvent*) {
    chips_ = layoutChips(width());
    if (height() != heightForWidth(width())) updateGeometry();
}

void TokenStrip::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    if (tokens_.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(
            rect().adjusted(kSpacing, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
            tr("Tokens appear here as you type; click one to follow it in the views."));
        return;
    }
    for (int i = 0; i < tokens_.size(); ++i) {
        const QRectF chip = QRectF(chips_[std::size_t(i)]).adjusted(0.5, 0.5, -0.5, -0.5);
        const bool selected = i == selected_, hovered = i == hovered_;
        const QColor fill = selected  ? render::style::kAccent
                            : hovered ? QColor(255, 236, 204)
                                      : QColor(238, 241, 245);
        painter.setBrush(fill);
        painter.setPen(
            QPen(selected || hovered ? render::style::kAccent : QColor(196, 204, 214), 1.0));
        painter.drawRoundedRect(chip, 6, 6);
        painter.setPen(selected ? QColor(Qt::white) : render::style::kInk);
        render::drawTextLine(painter, chip.adjusted(kPadX - 1, 0, 1 - kPadX, 0), Qt::AlignHCenter,
                             tokens_[i]);
    }
}

int TokenStrip::chipAt(QPoint point) const {
    for (std::size_t i = 0; i < chips_.size(); ++i)
        if (chips_[i].contains(point)) return int(i);
    return -1;
}

void TokenStrip::setHovered(int index) {
    if (index == hovered_) return;
    hovered_ = index;
    update();
    Q_EMIT tokenHovered(index);
}

void TokenStrip::mouseMoveEvent(QMouseEvent* event) {
    setHovered(chipAt(event->position().toPoint()));
}

void TokenStrip::leaveEvent(QEvent*) {
    setHovered(-1);
}

void TokenStrip::mousePressEvent(QMouseEvent* event) {
    const int index = chipAt(event->position().toPoint());
    if (event->button() != Qt::LeftButton || index < 0) return;
    setSelected(index == selected_ ? -1 : index);
    Q_EMIT tokenClicked(selected_);
}

QScrollArea* scrolledStrip(TokenStrip* strip, QWidget* parent) {
    auto* area = new QScrollArea(parent);
    area->setWidget(strip);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return area;
}

void fitStripArea(QScrollArea* area, int available, int minCap) {
    const int whole = area->widget()->heightForWidth(area->viewport()->width());
    area->setFixedHeight(std::min(whole, std::max(minCap, available / 4)));
}
} // namespace headlight::app
