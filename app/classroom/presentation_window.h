#pragma once
// Presentation mode (F5): the current view alone, full screen, white figure on a black frame
// with the lesson step's title above and its caption below in large type. Keys:
//   Right / PageDown, Left / PageUp   next / previous lesson step
//   Down / Up                         next / previous layer
//   + / ] and - / [                   next / previous head
//   Esc                               leave (the window is as it was)
// The token under the pointer lights up like a laser pointer, in the token strip and on the
// heatmap's token axes (its row and column), wherever the pointer is. A long pass's map is built
// off the GUI thread (on the workspace's loader) while the figure says which; a closed window
// asks for none.

#include "figure_view.h"
#include "token_strip.h"

#include <QWidget>

class QLabel;
class QScrollArea;

namespace headlight::app {

class Classroom;
class Workspace;

// The figure drawn kZoom times larger than in the window (figure fonts follow the figure's
// bounds, so this is what makes its labels readable from the back of a room), with the laser
// token's row and column outlined.
class LaserFigureView : public FigureView {
    Q_OBJECT
public:
    static constexpr double kZoom = 1.5;
    using FigureView::FigureView;
    void setLaser(int token);
    int laser() const { return laser_; }
    int tokenAt(QPointF point) const; // the key token of the heatmap cell under `point`, or -1

Q_SIGNALS:
    void tokenHovered(int token);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override; // no clicks: the keys drive the figure
    void leaveEvent(QEvent* event) override;

private:
    QRectF page() const; // the figure's bounds before zooming
    int laser_ = -1;
};

// The token strip with the laser token ringed.
class LaserTokenStrip : public TokenStrip {
    Q_OBJECT
public:
    using TokenStrip::TokenStrip;
    void setLaser(int token);
    int laser() const { return laser_; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    int laser_ = -1;
};

class PresentationWindow : public QWidget {
    Q_OBJECT
public:
    PresentationWindow(Classroom* classroom, Workspace* workspace);

    void start(); // full screen, showing the workspace's current view
    LaserFigureView* figureView() const { return figure_; }
    LaserTokenStrip* tokenStrip() const { return strip_; }
    QString titleText() const;
    QString captionText() const;

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void setLaser(int token);
    void fitStrip(); // the strip's height: all of it, or a quarter of the window scrolled

    Classroom* classroom_;
    Workspace* workspace_;
    QLabel* title_;
    LaserTokenStrip* strip_;
    QScrollArea* stripArea_; // holds the strip
    LaserFigureView* figure_;
    QLabel* caption_;
};
} // namespace headlight::app
