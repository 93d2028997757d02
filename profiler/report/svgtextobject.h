#pragma once
// Draws an SVG chart inside a QTextDocument, as one inline object: with a PDF painter the chart stays
// vector graphics, and since an object sits on one line, a page break never cuts it in half.
#include <QObject>
#include <QTextObjectInterface>

namespace trainbench::profiler {

class SvgTextObject : public QObject, public QTextObjectInterface {
    Q_OBJECT
    Q_INTERFACES(QTextObjectInterface)

public:
    static constexpr int kObjectType = QTextFormat::UserObject + 1;
    static constexpr int kSvgProperty = QTextFormat::UserProperty + 1;   // QByteArray: the SVG text
    static constexpr int kSizeProperty = QTextFormat::UserProperty + 2;  // QSizeF: in layout units

    // The character format of one chart `width` layout units wide (height from its view box).
    static QTextCharFormat format(const QByteArray& svg, double width);

    QSizeF intrinsicSize(QTextDocument* doc, int position, const QTextFormat& format) override;
    void drawObject(QPainter* painter, const QRectF& rect, QTextDocument* doc, int position,
                    const QTextFormat& format) override;
};

}  // namespace trainbench::profiler
