// writePdf: the HTML report's content laid out by QTextDocument on A4 pages, with the same SVG charts
// drawn as vectors (SvgTextObject), a page break before each run's section (2+ runs), and a footer.
#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>

#include "profiler/report/guiscope.h"
#include "profiler/report/report.h"
#include "profiler/report/reportfile.h"
#include "profiler/report/reportformat.h"
#include "profiler/report/reportdocument.h"

namespace trainbench::profiler {

namespace {

constexpr double kFooter = 22.0;  // layout units under each page's text

std::string reportTitle(const ReportData& data) {
    std::string title = "trainbench report";
    for (const RunReport& r : data.runs) title += (&r == &data.runs.front() ? ": " : ", ") + runLabel(r.run);
    return title;
}

QByteArray renderPdf(const ReportData& data) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 14, 15, 12), QPageLayout::Millimeter);
    writer.setTitle(QString::fromStdString(reportTitle(data)));
    writer.setCreator("trainbench");
    const QRectF paint = writer.pageLayout().paintRectPixels(writer.resolution());
    const double scale = writer.resolution() / ReportDocument::kLayoutDpi;
    const QSizeF page(paint.width() / scale, paint.height() / scale - kFooter);
    ReportDocument report(data, page);
    QTextDocument& doc = report.document();

    const QString footerTitle = QString::fromStdString(reportTitle(data));
    QPainter painter(&writer);
    const int pages = doc.pageCount();
    for (int p = 0; p < pages; ++p) {
        if (p > 0) writer.newPage();
        painter.save();
        painter.scale(scale, scale);
        painter.save();
        painter.translate(0, -p * page.height());
        QAbstractTextDocumentLayout::PaintContext context;
        context.clip = QRectF(0, p * page.height(), page.width(), page.height());
        painter.setClipRect(context.clip);
        doc.documentLayout()->draw(&painter, context);
        painter.restore();
        QFont small("DejaVu Sans");
        small.setPixelSize(9);  // layout units, like the page: the painter scales to the PDF's resolution
        painter.setFont(small);
        painter.setPen(QColor("#777777"));
        const QRectF footer(0, page.height() + 6, page.width(), kFooter - 6);
        painter.drawLine(QPointF(0, page.height() + 4), QPointF(page.width(), page.height() + 4));
        const QString pageText = QStringLiteral("page %1 of %2").arg(p + 1).arg(pages);
        painter.drawText(footer, Qt::AlignRight | Qt::AlignVCenter, pageText);
        painter.drawText(footer.adjusted(0, 0, -80, 0), Qt::AlignLeft | Qt::AlignVCenter,
                         painter.fontMetrics().elidedText(footerTitle, Qt::ElideRight, static_cast<int>(page.width() - 90)));
        painter.restore();
    }
    painter.end();
    return buffer.data();
}

}  // namespace

void writePdf(const ReportData& data, const std::string& path) {
    if (path.empty()) throw ReportError("no file name given for the PDF report");
    QByteArray pdf;
    {
        GuiScope gui("writing a PDF report");
        pdf = renderPdf(data);
    }
    if (!pdf.startsWith("%PDF-")) throw ReportError(path + ": PDF report not saved: Qt produced no PDF");
    writeReportFile(path, std::string_view(pdf.constData(), static_cast<size_t>(pdf.size())), "PDF report");
}

}  // namespace trainbench::profiler
