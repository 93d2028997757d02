#pragma once
// A chart as data: axes, series of points, and how to draw them. The report builds these from the
// store's records (reportcharts.h) and writes them as SVG (svgchart.h), CSV or PNG; nothing here
// knows where the numbers came from.
#include <optional>
#include <string>
#include <vector>

namespace trainbench::profiler {

struct ChartPoint {
    double x = 0.0;
    double y = 0.0;  // NaN: a gap in the line (a diverged loss)
};

enum class SeriesStyle {
    Line,         // a polyline
    Dashed,       // a dashed polyline: a reference (ideal scaling, target accuracy)
    LineMarkers,  // a polyline with a dot at each point: few, measured points (evaluations)
    Spread,       // points in pairs (x, low), (x, high): a bar with caps between them, the spread of
                  // repeated runs (seeds) around a point of another series
};

struct ChartSeries {
    std::string name;
    std::vector<ChartPoint> points;
    SeriesStyle style = SeriesStyle::Line;
    int colour = -1;  // index into the palette; -1: the series' position
};

enum class AxisFormat {
    Number,   // 1.5, 2k, 40k
    Percent,  // values are fractions 0..1, ticks read "85 %"
};

struct ChartAxis {
    std::string label;           // "step", "test accuracy"
    AxisFormat format = AxisFormat::Number;
    std::optional<double> min;   // forced ends; otherwise from the data (zero included for y)
    std::optional<double> max;
    bool includeZero = true;     // the value axis starts at zero unless told otherwise
    bool integer = false;        // ticks at whole numbers only (replicas)
    bool log2 = false;           // x of Lines charts: a log scale, ticks at powers of two labelled as counts
};

enum class ChartKind {
    Lines,        // series are curves over a shared x axis
    StackedArea,  // series are layers over the same x values, first at the bottom
    StackedBars,  // one horizontal bar per category; series are its segments, points[i].y for category i
};

struct Chart {
    std::string id;     // stable and file-name safe: "run-3-loss", "compare-accuracy-step"
    std::string title;
    ChartKind kind = ChartKind::Lines;
    ChartAxis x, y;
    std::vector<ChartSeries> series;
    std::vector<std::string> categories;  // StackedBars: the bars' labels, top to bottom
    std::string note;   // how the points were made, shown under the chart ("min and max of ...")
};

}  // namespace trainbench::profiler
