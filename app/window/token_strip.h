#pragma once
// The tokens of the current text as chips that wrap onto several lines. Hovering a chip
// highlights it; clicking selects it as the query token the views emphasise (clicking it again
// clears the selection).

#include <QStringList>
#include <QWidget>
#include <vector>

class QScrollArea;

namespace headlight::app {

class TokenStrip : public QWidget {
    Q_OBJECT
public:
    explicit TokenStrip(QWidget* parent = nullptr);

    void setTokens(const QStringList& tokens);
    void setSelected(int index); // -1 for none
    const QStringList& tokens() const { return tokens_; }
    int selected() const { return selected_; }
    int hovered() const { return hovered_; }
    QRect chipRect(int index) const; // in widget coordinates; empty when out of range

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void tokenClicked(int index); // the new selection, -1 when cleared
    void tokenHovered(int index); // -1 when the pointer leaves the chips

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void measureChips(); // chipHeight_, chipWidths_ and chips_ from the tokens and the font
    std::vector<QRect> layoutChips(int width) const;
    int chipAt(QPoint point) const;
    void setHovered(int index);

    QStringList tokens_;
    int chipHeight_ = 0;
    std::vector<int> chipWidths_; // [tokens]
    std::vector<QRect> chips_;
    int selected_ = -1;
    int hovered_ = -1;
};

// `strip` in a scroll area of its own (`parent`'s), which fitStripArea sizes.
QScrollArea* scrolledStrip(TokenStrip* strip, QWidget* parent);
// The area's height: all of its strip, or at most max(minCap, available / 4) of it, scrolled.
// Why capped: a long text's strip (1,500 chips) would push the figure off the window.
void fitStripArea(QScrollArea* area, int available, int minCap);
} // namespace headlight::app
