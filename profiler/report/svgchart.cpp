// chartSvg: a Chart as a self-contained SVG image — title, axes with round ticks and labels, grid,
// the series, a legend and a note — sized for a page (760 units wide) and readable in light print.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "profiler/report/axisticks.h"
#include "profiler/report/report.h"
#include "profiler/report/svgcanvas.h"

namespace trainbench::profiler {

namespace {

constexpr double kWidth = 760, kTitleY = 24, kPlotTop = 40, kPlotHeight = 210, kRight = 24;
constexpr double kTick = 11, kLabel = 11.5, kLegend = 11, kLegendRow = 18;
// Okabe and Ito's colour-blind-safe palette, darkest first so that light print stays legible.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#6E6E6E", "#000000"};
constexpr const char* kGrid = "#E3E3E3";
constexpr const char* kAxis = "#8A8A8A";
constexpr const char* kInk = "#333333";

const char* colourOf(const ChartSeries& s, size_t index) {
    const size_t n = sizeof kPalette / sizeof kPalette[0];
    return kPalette[(s.colour >= 0 ? static_cast<size_t>(s.colour) : index) % n];
}

struct Frame {
    double left = 64, top = kPlotTop, width = 0, height = kPlotHeight;
    AxisTicks x, y;
    double bottom() const { return top + height; }
    double px(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * width; }
    double py(double v) const { return bottom() - (v - y.lo) / (y.hi - y.lo) * height; }
};

struct Range {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    void add(double v) {
        if (!std::isfinite(v)) return;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    bool empty() const { return lo > hi; }
};

AxisTicks ticksFor(Range r, const ChartAxis& axis, bool includeZero, int target) {
    if (r.empty()) r = {0.0, 1.0};
    if (includeZero) r.add(0.0);
    if (axis.min) r.lo = *axis.min;
    if (axis.max) r.hi = *axis.max;
    AxisTicks t = niceTicks(r.lo, r.hi, target, axis.integer);
    // A forced end stays where it was asked to be (an accuracy axis ends at 100 %, not 120 %).
    if (axis.min) t.lo = *axis.min;
    if (axis.max) t.hi = *axis.max;
    t.ticks.erase(std::remove_if(t.ticks.begin(), t.ticks.end(),
                                 [&](double v) { return v < t.lo - 1e-9 * t.step || v > t.hi + 1e-9 * t.step; }),
                  t.ticks.end());
    return t;
}

struct LegendItem {
    std::string name;
    const char* colour;
    SeriesStyle style;
    bool swatch;  // a filled square (areas, bars) rather than a line
};

std::vector<std::vector<LegendItem>> legendRows(const std::vector<LegendItem>& items, double width) {
    std::vector<std::vector<LegendItem>> rows(1);
    double used = 0;
    for (const LegendItem& it : items) {
        const double w = 26 + SvgCanvas::textWidth(SvgCanvas::fitText(it.name, kLegend, width - 30), kLegend) + 18;
        if (used > 0 && used + w > width) {
            rows.emplace_back();
            used = 0;
        }
        rows.back().push_back(it);
        used += w;
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

void drawLegend(SvgCanvas& c, const std::vector<std::vector<LegendItem>>& rows, double left, double top, double width) {
    double y = top;
    for (const auto& row : rows) {
        double x = left;
        for (const LegendItem& it : row) {
            if (it.swatch) {
                c.rect(x, y - 9, 18, 10, it.colour);
            } else if (it.style == SeriesStyle::Spread) {
                c.line(x + 9, y - 9, x + 9, y + 1, it.colour, 1.4);
                c.line(x + 5, y - 9, x + 13, y - 9, it.colour, 1.4);
                c.line(x + 5, y + 1, x + 13, y + 1, it.colour, 1.4);
            } else {
                c.line(x, y - 4, x + 18, y - 4, it.colour, 2.2, it.style == SeriesStyle::Dashed ? "5 3" : nullptr);
                if (it.style == SeriesStyle::LineMarkers) c.circle(x + 9, y - 4, 3, it.colour);
            }
            const std::string name = SvgCanvas::fitText(it.name, kLegend, width - 30);
            c.text(x + 24, y, name, {.size = kLegend, .fill = kInk});
            x += 26 + SvgCanvas::textWidth(name, kLegend) + 18;
        }
        y += kLegendRow;
    }
}

// Grid lines and tick labels of the value axis, and the category or x axis below.
void drawYAxis(SvgCanvas& c, const Frame& f, const ChartAxis& axis) {
    for (double v : f.y.ticks) {
        const double y = f.py(v);
        c.line(f.left, y, f.left + f.width, y, kGrid, 1);
        c.text(f.left - 6, y + 4, tickLabel(v, f.y.step, axis.format), {.size = kTick, .anchor = TextAnchor::End, .fill = "#555555"});
    }
    c.text(16, f.top + f.height / 2, axis.label,
           {.size = kLabel, .anchor = TextAnchor::Middle, .fill = kInk, .rotate = -90});
}

void drawXAxis(SvgCanvas& c, const Frame& f, const ChartAxis& axis) {
    c.line(f.left, f.bottom(), f.left + f.width, f.bottom(), kAxis, 1);
    for (double v : f.x.ticks) {
        const double x = f.px(v);
        c.line(x, f.bottom(), x, f.bottom() + 4, kAxis, 1);
        const std::string label = axis.log2 ? log2TickLabel(v) : tickLabel(v, f.x.step, axis.format);
        c.text(x, f.bottom() + 16, label, {.size = kTick, .anchor = TextAnchor::Middle, .fill = "#555555"});
    }
    c.text(f.left + f.width / 2, f.bottom() + 34, axis.label, {.size = kLabel, .anchor = TextAnchor::Middle, .fill = kInk});
}

// Splits at NaN (a gap) and clamps to the axes (a forced range must not let a line leave the plot).
std::vector<std::vector<SvgPoint>> segments(const Frame& f, const std::vector<ChartPoint>& points) {
    std::vector<std::vector<SvgPoint>> out(1);
    for (const ChartPoint& p : points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
            if (!out.back().empty()) out.emplace_back();
            continue;
        }
        out.back().push_back({f.px(std::clamp(p.x, f.x.lo, f.x.hi)), f.py(std::clamp(p.y, f.y.lo, f.y.hi))});
    }
    if (out.back().empty()) out.pop_back();
    return out;
}

double footer(SvgCanvas* c, const Chart& chart, const std::vector<LegendItem>& items, const Frame& f, double top) {
    const auto rows = legendRows(items, f.width);
    if (c) drawLegend(*c, rows, f.left, top + 10, f.width);
    double y = top + static_cast<double>(rows.size()) * kLegendRow;
    if (!chart.note.empty()) {
        y += 14;
        if (c) c->text(f.left, y, SvgCanvas::fitText(chart.note, 10, kWidth - f.left - kRight), {.size = 10, .fill = "#666666", .italic = true});
    }
    return y + 10;
}

// A log2 x axis is drawn as a linear one over log2(x); x <= 0 has no place on it (a gap).
Chart onLog2X(const Chart& chart) {
    Chart out = chart;
    for (ChartSeries& s : out.series)
        for (ChartPoint& p : s.points) p.x = p.x > 0 ? std::log2(p.x) : std::nan("");
    return out;
}

std::string lines(const Chart& given) {
    const Chart chart = given.x.log2 ? onLog2X(given) : given;
    Range xr, yr;
    for (const ChartSeries& s : chart.series)
        for (size_t i = 0; i < s.points.size(); ++i) {
            const ChartPoint& p = s.points[i];
            if (!std::isfinite(p.y) || !std::isfinite(p.x)) continue;
            xr.add(p.x);
            yr.add(p.y);
        }
    Frame f;
    f.width = kWidth - f.left - kRight;
    f.x = chart.x.log2 ? log2Ticks(xr.empty() ? 0.0 : xr.lo, xr.empty() ? 1.0 : xr.hi) : ticksFor(xr, chart.x, false, 6);
    f.y = ticksFor(yr, chart.y, chart.y.includeZero, 5);
    std::vector<LegendItem> items;
    for (size_t i = 0; i < chart.series.size(); ++i)
        items.push_back({chart.series[i].name, colourOf(chart.series[i], i), chart.series[i].style, false});
    const double height = footer(nullptr, chart, items, f, f.bottom() + 40);
    SvgCanvas c(kWidth, height, chart.title);
    c.rect(0, 0, kWidth, height, "#FFFFFF");
    c.text(f.left, kTitleY, chart.title, {.size = 14, .fill = "#111111", .bold = true});
    drawYAxis(c, f, chart.y);
    for (size_t i = 0; i < chart.series.size(); ++i) {
        const ChartSeries& s = chart.series[i];
        const char* colour = colourOf(s, i);
        if (s.style == SeriesStyle::Spread) {
            // Bars with caps, from (x, low) to (x, high); no line joins them.
            for (size_t k = 0; k + 1 < s.points.size(); k += 2) {
                const ChartPoint& a = s.points[k];
                const ChartPoint& b = s.points[k + 1];
                if (!std::isfinite(a.x) || !std::isfinite(a.y) || !std::isfinite(b.y) || a.y == b.y) continue;
                const double x = f.px(std::clamp(a.x, f.x.lo, f.x.hi));
                const double lo = f.py(std::clamp(a.y, f.y.lo, f.y.hi)), hi = f.py(std::clamp(b.y, f.y.lo, f.y.hi));
                c.line(x, lo, x, hi, colour, 1.4);
                c.line(x - 4, lo, x + 4, lo, colour, 1.4);
                c.line(x - 4, hi, x + 4, hi, colour, 1.4);
            }
            continue;
        }
        for (const auto& seg : segments(f, s.points)) {
            c.polyline(seg, colour, s.style == SeriesStyle::Dashed ? 1.5 : 1.8, s.style == SeriesStyle::Dashed ? "6 4" : nullptr);
            if (s.style == SeriesStyle::LineMarkers && s.points.size() <= 80)
                for (const SvgPoint& p : seg) c.circle(p.x, p.y, 2.6, colour);
        }
    }
    drawXAxis(c, f, chart.x);
    footer(&c, chart, items, f, f.bottom() + 40);
    return c.finish();
}

std::string stackedArea(const Chart& chart) {
    // Layers share the first layer's x values; each is drawn between the running sums below and above it.
    const size_t n = chart.series.empty() ? 0 : chart.series.front().points.size();
    std::vector<double> below(n, 0.0);
    Range xr, yr;
    std::vector<std::vector<double>> tops;
    for (const ChartSeries& s : chart.series) {
        std::vector<double> top = below;
        for (size_t i = 0; i < n && i < s.points.size(); ++i)
            if (std::isfinite(s.points[i].y)) top[i] += s.points[i].y;
        tops.push_back(top);
        below = top;
    }
    for (size_t i = 0; i < n; ++i) {
        xr.add(chart.series.front().points[i].x);
        yr.add(below[i]);
    }
    Frame f;
    f.width = kWidth - f.left - kRight;
    f.x = ticksFor(xr, chart.x, false, 6);
    f.y = ticksFor(yr, chart.y, true, 5);
    std::vector<LegendItem> items;
    for (size_t i = 0; i < chart.series.size(); ++i) items.push_back({chart.series[i].name, colourOf(chart.series[i], i), SeriesStyle::Line, true});
    const double height = footer(nullptr, chart, items, f, f.bottom() + 40);
    SvgCanvas c(kWidth, height, chart.title);
    c.rect(0, 0, kWidth, height, "#FFFFFF");
    c.text(f.left, kTitleY, chart.title, {.size = 14, .fill = "#111111", .bold = true});
    drawYAxis(c, f, chart.y);
    std::vector<double> base(n, 0.0);
    for (size_t k = 0; k < chart.series.size(); ++k) {
        std::vector<SvgPoint> poly;
        for (size_t i = 0; i < n; ++i) poly.push_back({f.px(chart.series.front().points[i].x), f.py(std::min(tops[k][i], f.y.hi))});
        for (size_t i = n; i-- > 0;) poly.push_back({f.px(chart.series.front().points[i].x), f.py(std::min(base[i], f.y.hi))});
        c.polygon(poly, colourOf(chart.series[k], k), 0.9);
        base = tops[k];
    }
    drawXAxis(c, f, chart.x);
    footer(&c, chart, items, f, f.bottom() + 40);
    return c.finish();
}

std::string valueText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, std::fabs(v) < 10 ? "%.2f" : std::fabs(v) < 100 ? "%.1f" : "%.0f", v);
    return buf;
}

std::string stackedBars(const Chart& chart) {
    constexpr double kBar = 22, kPitch = 30, kMaxLabel = 230;
    const size_t n = chart.categories.size();
    double labelWidth = 0;
    for (const std::string& cat : chart.categories)
        labelWidth = std::max(labelWidth, SvgCanvas::textWidth(SvgCanvas::fitText(cat, kTick, kMaxLabel), kTick));
    std::vector<double> totals(n, 0.0);
    for (const ChartSeries& s : chart.series)
        for (size_t i = 0; i < n && i < s.points.size(); ++i)
            if (std::isfinite(s.points[i].y)) totals[i] += s.points[i].y;
    Range xr;
    for (double t : totals) xr.add(t);
    Frame f;
    f.left = std::max(64.0, labelWidth + 16);
    f.width = kWidth - f.left - 60;  // room for the total after the longest bar
    f.height = static_cast<double>(n) * kPitch + 8;
    f.x = ticksFor(xr, chart.x, true, 6);
    std::vector<LegendItem> items;
    for (size_t i = 0; i < chart.series.size(); ++i) items.push_back({chart.series[i].name, colourOf(chart.series[i], i), SeriesStyle::Line, true});
    const double height = footer(nullptr, chart, items, f, f.bottom() + 40);
    SvgCanvas c(kWidth, height, chart.title);
    c.rect(0, 0, kWidth, height, "#FFFFFF");
    c.text(16, kTitleY, chart.title, {.size = 14, .fill = "#111111", .bold = true});
    for (double v : f.x.ticks) c.line(f.px(v), f.top, f.px(v), f.bottom(), kGrid, 1);
    for (size_t i = 0; i < n; ++i) {
        const double y = f.top + 4 + static_cast<double>(i) * kPitch;
        c.text(f.left - 8, y + kBar / 2 + 4, SvgCanvas::fitText(chart.categories[i], kTick, kMaxLabel),
               {.size = kTick, .anchor = TextAnchor::End, .fill = kInk});
        double x = 0;
        for (size_t k = 0; k < chart.series.size(); ++k) {
            const auto& pts = chart.series[k].points;
            const double v = i < pts.size() && std::isfinite(pts[i].y) ? pts[i].y : 0.0;
            if (v > 0) c.rect(f.px(x), y, f.px(x + v) - f.px(x), kBar, colourOf(chart.series[k], k));
            x += v;
        }
        c.text(f.px(totals[i]) + 5, y + kBar / 2 + 4, valueText(totals[i]), {.size = kTick, .fill = kInk});
    }
    c.line(f.left, f.top, f.left, f.bottom(), kAxis, 1);
    drawXAxis(c, f, chart.x);
    footer(&c, chart, items, f, f.bottom() + 40);
    return c.finish();
}

}  // namespace

std::string chartSvg(const Chart& chart) {
    switch (chart.kind) {
        case ChartKind::StackedArea: return stackedArea(chart);
        case ChartKind::StackedBars: return stackedBars(chart);
        case ChartKind::Lines: break;
    }
    return lines(chart);
}

}  // namespace trainbench::profiler
