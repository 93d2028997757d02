// writeChartPng: a chart's SVG rasterised by Qt's SVG renderer on a white background.
#include <QBuffer>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include "profiler/report/guiscope.h"
#include "profiler/report/report.h"
#include "profiler/report/reportfile.h"

namespace trainbench::profiler {

void writeChartPng(const Chart& chart, const std::string& path, int widthPixels) {
    if (widthPixels < 16 || widthPixels > 16384)
        throw ReportError(path + ": chart image not saved: width " + std::to_string(widthPixels) +
                          " px is outside 16..16384");
    QByteArray png;
    {
        GuiScope gui("writing a chart image");
        QSvgRenderer renderer(QByteArray::fromStdString(chartSvg(chart)));
        const QRectF box = renderer.viewBoxF();
        const int height = qMax(1, qRound(widthPixels * box.height() / box.width()));
        QImage image(widthPixels, height, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        renderer.render(&painter);
        painter.end();
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, "PNG");
    }
    writeReportFile(path, std::string_view(png.constData(), static_cast<size_t>(png.size())), "chart image");
}

}  // namespace trainbench::profiler
