#pragma once
// Building blocks of the report's HTML, shared by the browser page and the PDF: escaped text, tables,
// and the sections (overview, comparison, one per run). Everything from the store goes through
// esc(): run names, messages and experiment values may contain '<' or '&'.
#include <functional>
#include <string>
#include <vector>

#include "profiler/report/chart.h"
#include "profiler/report/reportdata.h"

namespace trainbench::profiler::html {

// How a chart goes into the page: inline <svg> (browser) or a marker the PDF writer swaps for a
// drawn chart.
using ChartEmbed = std::function<std::string(const Chart&)>;

std::string esc(const std::string& text);

struct Cell {
    std::string html;      // already escaped / markup
    bool number = false;   // right-aligned
};
inline Cell text(const std::string& t) { return {esc(t), false}; }
inline Cell number(const std::string& t) { return {esc(t), true}; }

// A table with a header row. `cls` is its class attribute.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                  const std::string& cls = "grid");
std::string charts(const std::vector<Chart>& charts, const ChartEmbed& embed);

// The sections, in page order.
std::string header(const ReportData& data);
std::string overview(const ReportData& data);
std::string comparison(const ReportData& data, const ChartEmbed& embed);  // empty for one run
std::string runSection(const RunReport& run, bool newPage, const ChartEmbed& embed);
std::string verdictSection(const RunReport& run);
std::string opsSection(const RunReport& run);
std::string attributesSection(const RunReport& run);

// The whole <body> content.
std::string body(const ReportData& data, const ChartEmbed& embed);

}  // namespace trainbench::profiler::html
