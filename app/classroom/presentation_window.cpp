#include "presentation_window.h"

#include "classroom.h"
#include "streamed_figures.h"
#include "workspace.h"

#include <QFileInfo>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QScreen>
#include <QScrollArea>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

// The laser: a saturated red that stands out on viridis, cividis and the white page alike.
const QColor kLaser{230, 0, 60};
constexpr int kMinStripCap = 100; // pixels: about two rows of the strip's large chips

QFont pixelFont(const QWidget* widget, int pixels, bool bold) {
    QFont font = widget->font();
    font.setPixelSize(pixels);
    font.setBold(bold);
    return font;
}

QLabel* frameLabel(QWidget* parent, int pixels, bool bold) {
    auto* label = new QLabel(parent);
    label->setFont(pixelFont(parent, pixels, bold));
    label->setWordWrap(true);
    label->setStyleSheet(QStringLiteral("color: white; background: black;"));
    label->setFocusPolicy(Qt::NoFocus);
    return label;
}
} // namespace

void LaserFigureView::setLaser(int token) {
    if (token == laser_) return;
    laser_ = token;
    update();
}

QRectF LaserFigureView::page() const {
    return QRectF(QPointF(0, 0), QSizeF(size()) / kZoom);
}

int LaserFigureView::tokenAt(QPointF point) const {
    const auto* heatmap = panels() ? nullptr : std::get_if<render::HeatmapFigure>(&figure());
    if (!heatmap) return -1;
    const auto cell =
        render::heatmapCellAt(render::layoutHeatmap(page(), *heatmap), *heatmap, point / kZoom);
    return cell ? cell->second : -1;
}

void LaserFigureView::mouseMoveEvent(QMouseEvent* event) {
    Q_EMIT tokenHovered(tokenAt(event->position()));
}

void LaserFigureView::mousePressEvent(QMouseEvent*) {}

void LaserFigureView::leaveEvent(QEvent*) {
    Q_EMIT tokenHovered(-1);
}

void LaserFigureView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.scale(kZoom, kZoom);
    if (panels())
        render::paintPanels(painter, page(), *panels());
    else
        render::paintFigure(painter, page(), figure());
    const auto* heatmap = panels() ? nullptr : std::get_if<render::HeatmapFigure>(&figure());
    if (!heatmap || laser_ < 0) return;
    const render::HeatmapLayout layout = render::layoutHeatmap(page(), *heatmap);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(kLaser, 2.5));
    if (laser_ < heatmap->cols)
        painter.drawRect(
            render::heatmapCellRect(layout, *heatmap, 0, laser_)
                .united(render::heatmapCellRect(layout, *heatmap, heatmap->rows - 1, laser_)));
    if (laser_ < heatmap->rows)
        painter.drawRect(
            render::heatmapCellRect(layout, *heatmap, laser_, 0)
                .united(render::heatmapCellRect(layout, *heatmap, laser_, heatmap->cols - 1)));
}

void LaserTokenStrip::setLaser(int token) {
    if (token == laser_) return;
    laser_ = token;
    update();
}

void LaserTokenStrip::paintEvent(QPaintEvent* event) {
    TokenStrip::paintEvent(event);
    const QRect chip = chipRect(laser_);
    if (chip.isEmpty()) return;
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(kLaser, 4.0));
    painter.drawRoundedRect(QRectF(chip).adjusted(-2, -2, 2, 2), 8, 8);
}

PresentationWindow::PresentationWindow(Classroom* classroom, Workspace* workspace)
    : classroom_(classroom)
    , workspace_(workspace) {
    setWindowTitle(tr("Headlight — presentation"));
    QPalette frame = palette();
    frame.setColor(QPalette::Window, Qt::black);
    setPalette(frame);
    setAutoFillBackground(true);
    setFocusPolicy(Qt::StrongFocus);
    title_ = frameLabel(this, 34, true);
    title_->setObjectName(QStringLiteral("presentationTitle"));
    caption_ = frameLabel(this, 30, false);
    caption_->setObjectName(QStringLiteral("presentationCaption"));
    caption_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    strip_ = new LaserTokenStrip(this);
    strip_->setFont(pixelFont(this, 24, true));
    strip_->setFocusPolicy(Qt::NoFocus);
    stripArea_ = scrolledStrip(strip_, this);
    stripArea_->setFocusPolicy(Qt::NoFocus);
    figure_ = new LaserFigureView(this);
    figure_->setFocusPolicy(Qt::NoFocus);
    figure_->setMouseTracking(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(24, 16, 24, 16);
    layout->setSpacing(12);
    layout->addWidget(title_);
    layout->addWidget(stripArea_);
    layout->addWidget(figure_, 1);
    layout->addWidget(caption_);
    // Why figureUpdated: a long pass's map is built on the workspace's loader, whose end redraws
    // the workspace, and a selection whose map is still being built shows so here too.
    connect(workspace_, &Workspace::figureUpdated, this, &PresentationWindow::refresh);
    connect(classroom_, &Classroom::stepChanged, this, &PresentationWindow::refresh);
    connect(strip_, &TokenStrip::tokenHovered, this, &PresentationWindow::setLaser);
    connect(figure_, &LaserFigureView::tokenHovered, this, &PresentationWindow::setLaser);
    connect(strip_, &TokenStrip::tokenClicked, workspace_, &Workspace::selectQuery);
}

void PresentationWindow::start() {
    // Why the geometry too: without a window manager (a bare X server, a kiosk) full screen is
    // only a hint.
    setGeometry(workspace_->screen()->geometry());
    showFullScreen();
    refresh();
    raise();
    activateWindow();
    setFocus();
}

QString PresentationWindow::titleText() const {
    const io::Lesson& lesson = classroom_->lesson();
    const int step = classroom_->currentStep();
    if (step < 0 || step >= int(lesson.steps.size())) {
        const auto model = workspace_->sharedModel();
        return (model ? QFileInfo(model->folder).fileName() + QStringLiteral("  ·  ") : QString()) +
               viewName(workspace_->view());
    }
    const QString stepTitle = QString::fromStdString(lesson.steps[std::size_t(step)].title);
    return tr("%1  ·  %2 / %3%4")
        .arg(QString::fromStdString(lesson.title))
        .arg(step + 1)
        .arg(lesson.steps.size())
        .arg(stepTitle.isEmpty() ? QString() : QStringLiteral("  ·  ") + stepTitle);
}

QString PresentationWindow::captionText() const {
    return QString::fromStdString(classroom_->caption());
}

// The same figure as the workspace's, from its result and selection; a long pass's map is built
// off the GUI thread first (on the workspace's loader), the figure saying which meanwhile.
void PresentationWindow::refresh() {
    if (!isVisible()) return; // Why: a map built for a closed window would be one no one sees
    const ViewKind view = workspace_->view();
    const ForwardResult* result = workspace_->result();
    const ViewState& state = workspace_->state();
    if (!workspace_->ensureDrawable(view, state))
        figure_->setFigure(render::EmptyFigure{streamedWaitNote(view, *result, state)});
    else if (isPanelView(view))
        figure_->setPanels(buildPanels(view, result, state), buildFigure(view, result, state));
    else
        figure_->setFigure(
            buildFigure(view, result, state,
                        workspace_->corpusStats() ? &*workspace_->corpusStats() : nullptr));
    const QStringList tokens = result ? result->tokens : QStringList();
    if (strip_->tokens() != tokens) {
        strip_->setTokens(tokens);
        fitStrip();
    }
    strip_->setSelected(state.query);
    title_->setText(titleText());
    caption_->setText(captionText());
    caption_->setVisible(!caption_->text().isEmpty());
}

void PresentationWindow::fitStrip() {
    fitStripArea(stripArea_, height(), kMinStripCap);
}

void PresentationWindow::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitStrip();
}

void PresentationWindow::setLaser(int token) {
    strip_->setLaser(token);
    figure_->setLaser(token);
}

void PresentationWindow::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Right:
    case Qt::Key_PageDown:
        return classroom_->step(1);
    case Qt::Key_Left:
    case Qt::Key_PageUp:
        return classroom_->step(-1);
    case Qt::Key_Down:
        return workspace_->stepLayer(1);
    case Qt::Key_Up:
        return workspace_->stepLayer(-1);
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_BracketRight:
        return workspace_->stepHead(1);
    case Qt::Key_Minus:
    case Qt::Key_BracketLeft:
        return workspace_->stepHead(-1);
    case Qt::Key_Escape:
        hide();
        workspace_->window()->activateWindow();
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}
} // namespace headlight::app
