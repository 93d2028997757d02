#include "ui/charts/chartlabel.h"

#include <QPainter>

namespace trainbench::ui {
namespace {

constexpr qreal kPad = 2.0;

}  // namespace

ChartLabel::ChartLabel(QGraphicsItem* parent) : QGraphicsSimpleTextItem(parent) { setZValue(10); }

QRectF ChartLabel::boundingRect() const {
    return QGraphicsSimpleTextItem::boundingRect().adjusted(-kPad, -kPad / 2, kPad, kPad / 2);
}

void ChartLabel::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    if (backdrop_.isValid() && !text().isEmpty()) {
        QColor fill = backdrop_;
        fill.setAlpha(215);
        painter->setPen(Qt::NoPen);
        painter->setBrush(fill);
        painter->drawRoundedRect(boundingRect(), 3, 3);
    }
    QGraphicsSimpleTextItem::paint(painter, option, widget);
}

}  // namespace trainbench::ui
