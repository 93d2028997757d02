#include "profiler/report/svgtextobject.h"

#include <QPainter>
#include <QSvgRenderer>

namespace trainbench::profiler {

QTextCharFormat SvgTextObject::format(const QByteArray& svg, double width) {
    QSvgRenderer renderer(svg);
    const QRectF box = renderer.viewBoxF();
    const double height = box.width() > 0 ? width * box.height() / box.width() : width / 2;
    QTextCharFormat f;
    f.setObjectType(kObjectType);
    f.setProperty(kSvgProperty, svg);
    f.setProperty(kSizeProperty, QSizeF(width, height));
    return f;
}

QSizeF SvgTextObject::intrinsicSize(QTextDocument*, int, const QTextFormat& format) {
    return format.property(kSizeProperty).toSizeF();
}

void SvgTextObject::drawObject(QPainter* painter, const QRectF& rect, QTextDocument*, int, const QTextFormat& format) {
    QSvgRenderer renderer(format.property(kSvgProperty).toByteArray());
    painter->save();
    renderer.render(painter, rect);
    painter->restore();
}

}  // namespace trainbench::profiler
