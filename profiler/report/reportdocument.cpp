#include "profiler/report/reportdocument.h"

#include <QAbstractTextDocumentLayout>
#include <QTextBlock>
#include <QTextCursor>

#include "profiler/report/htmlparts.h"
#include "profiler/report/report.h"

namespace trainbench::profiler {

namespace {

// QTextDocument's CSS subset: no flex, no selectors beyond element and class, lengths in px or pt.
constexpr const char* kPdfCss = R"(
body { font-family: "DejaVu Sans"; font-size: 8.5pt; color: #1a1a1a; }
h1 { font-size: 15pt; margin-bottom: 2px; }
h2 { font-size: 12.5pt; margin-top: 14px; margin-bottom: 6px; color: #0b3d66; }
h2.newpage { page-break-before: always; }
h3 { font-size: 10.5pt; margin-top: 12px; margin-bottom: 4px; }
h4 { font-size: 9pt; margin-top: 8px; margin-bottom: 2px; }
p { margin-top: 2px; margin-bottom: 5px; }
table.grid { border-collapse: collapse; border-width: 1px; border-style: solid; border-color: #b8b8b8;
             margin-bottom: 0px; font-size: 7.5pt; }
th { background-color: #eef2f5; font-weight: bold; text-align: left; border-width: 1px; border-style: solid; border-color: #b8b8b8; }
td { border-width: 1px; border-style: solid; border-color: #b8b8b8; }
code { font-family: "DejaVu Sans Mono"; font-size: 7.5pt; }
pre { font-family: "DejaVu Sans Mono"; font-size: 7pt; }
pre.config { background-color: #f5f5f5; white-space: pre-wrap; }
.meta, .toc, .muted { color: #666666; }
.sev-high { color: #b3261e; } .sev-moderate { color: #9a5b00; } .sev-low { color: #2e6b30; }
.status-failed, .status-interrupted { color: #b3261e; font-weight: bold; }
.status-stopped { color: #9a5b00; font-weight: bold; }
p.chart { margin-top: 4px; margin-bottom: 8px; }
)";

std::string marker(size_t n) { return "@@trainbench-chart-" + std::to_string(n) + "@@"; }

}  // namespace

ReportDocument::ReportDocument(const ReportData& data, QSizeF page) : metrics_(1, 1, QImage::Format_RGB32) {
    // Charts go in as text markers, then each marker becomes one object character drawing its SVG.
    std::vector<QByteArray> svgs;
    const std::string body = html::body(data, [&](const Chart& c) {
        svgs.push_back(QByteArray::fromStdString(chartSvg(c)));
        return "<p class=\"chart\">" + marker(svgs.size() - 1) + "</p>\n";
    });
    metrics_.setDotsPerMeterX(qRound(kLayoutDpi / 0.0254));
    metrics_.setDotsPerMeterY(qRound(kLayoutDpi / 0.0254));
    doc_.documentLayout()->setPaintDevice(&metrics_);
    doc_.documentLayout()->registerHandler(SvgTextObject::kObjectType, &handler_);
    doc_.setUseDesignMetrics(true);
    doc_.setDocumentMargin(0);
    doc_.setPageSize(page);
    doc_.setDefaultStyleSheet(kPdfCss);
    doc_.setHtml(QString::fromStdString("<html><body>" + body + "</body></html>"));
    for (size_t n = 0; n < svgs.size(); ++n) {
        QTextCursor at = doc_.find(QString::fromStdString(marker(n)));
        if (at.isNull()) continue;
        at.insertText(QString(QChar::ObjectReplacementCharacter), SvgTextObject::format(svgs[n], page.width()));
        ++charts_;
    }
    layOut();
    keepHeadingsWithNext();
}

void ReportDocument::layOut() {
    // Qt 6.4 relays out only part of the document after edits such as the insertions above and
    // leaves the blocks after a table that crossed a page unlaid (drawn as nothing); lay all of it
    // out again.
    doc_.markContentsDirty(0, doc_.characterCount());
    (void)doc_.documentLayout()->documentSize();
}

// QTextDocument has no "keep with next": a heading can end a page while what it introduces starts
// the next one. Such a heading gets a page break before it; in document order, since each break
// moves everything after it.
void ReportDocument::keepHeadingsWithNext() {
    const double pageHeight = doc_.pageSize().height();
    auto pageOf = [&](const QTextBlock& b) {
        return static_cast<int>(doc_.documentLayout()->blockBoundingRect(b).top() / pageHeight);
    };
    for (QTextBlock block = doc_.begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() == 0) continue;
        const double top = doc_.documentLayout()->blockBoundingRect(block).top();
        if (top - pageOf(block) * pageHeight < 1.0) continue;  // already at the top of a page
        // The heading, and the paragraph under it if any, must share a page with what follows.
        QTextBlock next = block.next();
        bool split = false;
        for (int i = 0; i < 2 && next.isValid(); ++i, next = next.next()) split = split || pageOf(next) != pageOf(block);
        if (!split) continue;
        QTextCursor cursor(block);
        QTextBlockFormat format = block.blockFormat();
        format.setPageBreakPolicy(format.pageBreakPolicy() | QTextFormat::PageBreak_AlwaysBefore);
        cursor.setBlockFormat(format);
        layOut();
    }
}

}  // namespace trainbench::profiler
