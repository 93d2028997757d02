// A chart on its own: SVG text and the CSV of its series, as strings or files.
#include <cmath>
#include <cstdio>

#include "profiler/format/csvfield.h"
#include "profiler/report/report.h"
#include "profiler/report/reportfile.h"

namespace trainbench::profiler {

namespace {

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
