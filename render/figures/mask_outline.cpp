#include "figures/mask_outline.h"

#include <QPainterPath>
#include <QTransform>
#include <utility>

namespace headlight::render {

void paintMaskOutline(QPainter& painter, const std::vector<QPolygonF>& shapes, const QRectF& extent,
                      const QRectF& cells) {
    QTransform toCells;
    toCells.translate(cells.left(), cells.top());
    toCells.scale(cells.width() / extent.width(), cells.height() / extent.height());
    toCells.translate(-extent.left(), -extent.top());
    QPainterPath united;
    united.setFillRule(Qt::WindingFill);
    for (const QPolygonF& shape : shapes)
        united.addPolygon(toCells.map(shape));
    united = united.simplified();
    painter.save();
    painter.setClipRect(cells);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setBrush(Qt::NoBrush);
    // Why two strokes: a dark line under a light one reads on both ends of the colour map.
    for (const auto& [colour, width] :
         {std::pair{QColor(20, 20, 20), 2.6}, std::pair{QColor(255, 90, 170), 1.2}}) {
        painter.setPen(QPen(colour, width, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
        painter.drawPath(united);
    }
    painter.restore();
}
} // namespace headlight::render
