#pragma once
// The report as a QTextDocument laid out on pages: the HTML report's body (htmlparts.h) under a
// stylesheet QTextDocument understands, with each chart an inline SvgTextObject. writePdf paints it;
// tests look inside it. Needs a QGuiApplication (GuiScope).
#include <QImage>
#include <QSizeF>
#include <QTextDocument>

#include "profiler/report/reportdata.h"
#include "profiler/report/svgtextobject.h"

namespace trainbench::profiler {

class ReportDocument {
public:
    // Layout units are CSS pixels (96 per inch) whatever the output device; `page` is the text area
    // of one page in them. Charts are as wide as the page.
    static constexpr double kLayoutDpi = 96.0;

    ReportDocument(const ReportData& data, QSizeF page);
    ReportDocument(const ReportDocument&) = delete;
    ReportDocument& operator=(const ReportDocument&) = delete;

    QTextDocument& document() { return doc_; }
    int pages() const { return doc_.pageCount(); }
    size_t charts() const { return charts_; }

private:
    void layOut();
    void keepHeadingsWithNext();

    SvgTextObject handler_;  // declared before doc_: the document's layout keeps a pointer to it
    QImage metrics_;         // a 96-dpi device for the layout's font metrics
    QTextDocument doc_;
    size_t charts_ = 0;
};

}  // namespace trainbench::profiler
