// renderHtml / writeHtml: the report as one HTML file that needs nothing else — inline CSS, charts as
// inline SVG, no scripts, fonts or images from anywhere.
#include "profiler/report/htmlparts.h"
#include "profiler/report/report.h"
#include "profiler/report/reportfile.h"
#include "profiler/report/reportformat.h"

namespace trainbench::profiler {

namespace {

constexpr const char* kHtmlCss = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 14px; line-height: 1.4;
       color: #1a1a1a; background: #ffffff; max-width: 1200px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 3px; border-bottom: 2px solid #0072B2; }
h3 { font-size: 16px; margin: 22px 0 6px; }
h4 { font-size: 14px; margin: 14px 0 4px; }
p { margin: 4px 0 8px; }
a { color: #0060a0; }
.meta, .toc { color: #555; }
.muted { color: #666; }
table.grid { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
table.grid th, table.grid td { border: 1px solid #c4c4c4; padding: 3px 8px; text-align: left; vertical-align: top; }
table.grid th { background: #eef2f5; }
table.grid td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.overview td:first-child { background: #f7f7f7; white-space: nowrap; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre.config { background: #f7f7f7; border: 1px solid #ddd; padding: 8px 10px; white-space: pre-wrap; max-height: 40em; overflow: auto; }
pre.value { margin: 0; white-space: pre-wrap; }
.charts { display: flex; flex-wrap: wrap; gap: 14px; margin: 8px 0 6px; }
figure.chart { margin: 0; flex: 1 1 560px; max-width: 780px; }
figure.chart svg { display: block; width: 100%; height: auto; border: 1px solid #dddddd; }
.sev-high { color: #b3261e; } .sev-moderate { color: #9a5b00; } .sev-low { color: #2e6b30; }
.status-failed, .status-interrupted { color: #b3261e; font-weight: bold; }
.status-stopped { color: #9a5b00; font-weight: bold; }
ul.evidence { margin: 2px 0 10px; } ol.actions li { margin-bottom: 8px; }
@media print {
  body { max-width: none; margin: 0; font-size: 11px; }
  h2.newpage { page-break-before: always; }
  figure.chart, tr { break-inside: avoid; page-break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; page-break-after: avoid; }
  pre.config { max-height: none; overflow: visible; }
}
)";

std::string browserChart(const Chart& c) {
    return "<figure class=\"chart\" id=\"chart-" + html::esc(c.id) + "\">\n" + chartSvg(c) + "</figure>\n";
}

}  // namespace

std::string renderHtml(const ReportData& data) {
    std::string title = "trainbench report";
    for (const RunReport& r : data.runs) title += (&r == &data.runs.front() ? ": " : ", ") + runLabel(r.run);
    return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
           "<meta name=\"generator\" content=\"trainbench\"/>\n<title>" +
           html::esc(title) + "</title>\n<style>" + kHtmlCss + "</style>\n</head>\n<body>\n" + html::body(data, browserChart) +
           "</body>\n</html>\n";
}

void writeHtml(const ReportData& data, const std::string& path) { writeReportFile(path, renderHtml(data), "report"); }

}  // namespace trainbench::profiler
