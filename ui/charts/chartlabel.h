#pragma once
// A text label drawn on a chart (efficiency at a scaling point, a bar's total, a limit's name)
// over a soft backdrop in the window colour, so it stays legible where it crosses a line.
#include <QGraphicsSimpleTextItem>

namespace trainbench::ui {

class ChartLabel : public QGraphicsSimpleTextItem {
public:
    explicit ChartLabel(QGraphicsItem* parent = nullptr);

    void setBackdrop(const QColor& color) { backdrop_ = color; update(); }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    QColor backdrop_;
};

}  // namespace trainbench::ui
