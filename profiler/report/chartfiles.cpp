// A chart on its own: SVG text and the CSV of its series, as strings or files.
#include <cmath>
#include <cstdio>

#include "profiler/report/report.h"
#include "profiler/report/reportfile.h"

namespace trainbench::profiler {

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string csvNumber(double v) {
    if (std::isnan(v)) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace

std::string chartCsv(const Chart& chart) {
    const bool bars = chart.kind == ChartKind::StackedBars;
    std::string out = bars ? "series,category,value\n" : "series,x,y\n";
    for (const ChartSeries& s : chart.series)
        for (size_t i = 0; i < s.points.size(); ++i) {
            const ChartPoint& p = s.points[i];
            out += csvField(s.name) + ",";
            out += bars ? csvField(i < chart.categories.size() ? chart.categories[i] : std::to_string(i)) : csvNumber(p.x);
            out += "," + csvNumber(p.y) + "\n";
        }
    return out;
}

void writeChartSvg(const Chart& chart, const std::string& path) { writeReportFile(path, chartSvg(chart), "chart"); }

void writeChartCsv(const Chart& chart, const std::string& path) { writeReportFile(path, chartCsv(chart), "chart data"); }

}  // namespace trainbench::profiler
