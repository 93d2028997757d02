#include "bench/ui/redrawbench.h"

#include "bench/benchutil.h"
#include "ui/charts/downsample.h"
#include "ui/charts/series.h"
#include "ui/charts/timeserieschart.h"

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QThread>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>

namespace trainbench::bench {
namespace {

constexpr double kGoalMs = 100.0;

struct Zoom {
    double lo = 0.0, hi = 1.0;
};

// A training loss over steps: exponential decay, noise shrinking with it, and rare spikes, so
// every bucket has real minima and maxima to find.
std::vector<QPointF> lossCurve(int n, std::mt19937& rng) {
    std::normal_distribution<double> noise(0.0, 1.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<QPointF> points;
    points.reserve(size_t(n));
    for (int i = 1; i <= n; ++i) {
        const double decay = std::exp(-i / (0.1 * n));
        double y = 2.3 * decay + 0.15 + 0.05 * noise(rng) * (0.3 + decay);
        if (unit(rng) < 1e-4) y += 1.0;  // a bad batch
        points.emplace_back(i, y);
    }
    return points;
}

// Zoom windows of log-uniform width, from 0.05 % of the steps to all of them, at random places.
std::vector<Zoom> zooms(double x0, double x1, int count, std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Zoom> out;
    for (int i = 0; i < count; ++i) {
        const double fraction = std::pow(10.0, -3.3 * unit(rng));
        const double span = (x1 - x0) * fraction;
        const double lo = x0 + (x1 - x0 - span) * unit(rng);
        out.push_back({lo, lo + span});
    }
    return out;
}

// Wide windows only (all, half, a fifth, a tenth of the steps, in turn): where handing Qt Charts
// every point in range hurts.
std::vector<Zoom> wideZooms(double x0, double x1, int count, std::mt19937& rng) {
    const double fractions[] = {1.0, 0.5, 0.2, 0.1};
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Zoom> out;
    for (int i = 0; i < count; ++i) {
        const double span = (x1 - x0) * fractions[i % 4];
        const double lo = x0 + (x1 - x0 - span) * unit(rng);
        out.push_back({lo, lo + span});
    }
    return out;
}

double msSince(Clock::time_point t0) { return secondsSince(t0) * 1e3; }

// CPU time of this thread: what a frame costs when the machine is shared (wall time is what a
// user waits; on a loaded machine it includes the time other processes had the core).
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// The work after a change up to a painted frame: pending layout, then the widget into an image.
void settleAndRender(QWidget& widget, QImage& image) {
    QCoreApplication::processEvents();
    QPainter painter(&image);
    widget.render(&painter);
}

struct Timings {
    std::vector<double> total, update, render, cpu;
    std::vector<double> shownPoints;
};

void printRow(const char* what, const std::vector<double>& ms, bool goal) {
    std::printf("  %-40s median %8.2f ms   p95 %8.2f ms   max %8.2f ms%s\n", what, percentile(ms, 0.5),
                percentile(ms, 0.95), percentile(ms, 1.0),
                goal ? (percentile(ms, 0.95) < kGoalMs ? "   (goal < 100 ms: met)" : "   (goal < 100 ms: MISSED)") : "");
}

// TimeSeriesChart: setXRange → re-bucket the visible range at the plot's width → replace → render.
Timings timeChart(const std::vector<QPointF>& data, const std::vector<Zoom>& ranges, const RedrawOptions& o) {
    ui::TimeSeriesChart chart;
    chart.resize(o.width, o.height);
    chart.setTitle(QStringLiteral("Training loss"));
    chart.setAxisTitles(QStringLiteral("step"), QStringLiteral("loss"));
    chart.setSeries(ui::Series::make(QStringLiteral("train loss"), data));
    chart.show();
    QImage image(chart.size(), QImage::Format_ARGB32_Premultiplied);
    for (int i = 0; i < 3; ++i) {  // first layout, fonts, caches
        QCoreApplication::processEvents();
        chart.refreshNow();
        settleAndRender(chart, image);
    }
    Timings t;
    for (const Zoom& z : ranges) {
        const double c0 = threadCpuMs();
        const auto t0 = Clock::now();
        chart.setXRange(z.lo, z.hi);
        chart.refreshNow();
        const double update = msSince(t0);
        const auto t1 = Clock::now();
        settleAndRender(chart, image);
        t.render.push_back(msSince(t1));
        t.update.push_back(update);
        t.total.push_back(msSince(t0));
        t.cpu.push_back(threadCpuMs() - c0);
        t.shownPoints.push_back(chart.lineSeries(QStringLiteral("train loss"))->count());
    }
    return t;
}

// The comparator: a plain QChartView handed every point in the range (what a chart without
// downsampling does on zoom).
Timings timeAllPoints(const std::vector<QPointF>& data, const std::vector<Zoom>& ranges, const RedrawOptions& o) {
    auto* series = new QLineSeries;
    auto* chart = new QChart;
    chart->addSeries(series);
    auto* x = new QValueAxis;
    auto* y = new QValueAxis;
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    chart->legend()->hide();
    QChartView view(chart);
    view.setRenderHint(QPainter::Antialiasing);
    view.resize(o.width, o.height);
    view.show();
    QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
    settleAndRender(view, image);
    Timings t;
    for (const Zoom& z : ranges) {
        const double c0 = threadCpuMs();
        const auto t0 = Clock::now();
        const ui::IndexRange r = ui::visibleRange(data, z.lo, z.hi);
        QList<QPointF> shown(data.begin() + qsizetype(r.begin), data.begin() + qsizetype(r.end));
        double lo = 1e300, hi = -1e300;
        for (const QPointF& p : shown) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
        series->replace(shown);
        x->setRange(z.lo, z.hi);
        if (lo <= hi) y->setRange(lo, hi);
        const double update = msSince(t0);
        const auto t1 = Clock::now();
        settleAndRender(view, image);
        t.render.push_back(msSince(t1));
        t.update.push_back(update);
        t.total.push_back(msSince(t0));
        t.cpu.push_back(threadCpuMs() - c0);
        t.shownPoints.push_back(double(shown.size()));
    }
    return t;
}

void report(const char* title, const Timings& t, bool goal) {
    std::printf("%s\n", title);
    printRow("zoom → frame, wall", t.total, goal);
    printRow("zoom → frame, CPU of the GUI thread", t.cpu, goal);
    printRow("  re-bucket + replace + axes", t.update, false);
    printRow("  layout + paint + render into QImage", t.render, false);
    std::printf("  points handed to Qt Charts: median %.0f, max %.0f\n", percentile(t.shownPoints, 0.5),
                percentile(t.shownPoints, 1.0));
}

}  // namespace

int runRedrawBench(const RedrawOptions& o) {
    std::mt19937 rng(o.seed);
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    std::printf("trainbench-ui-bench redraw: %d×%d px chart, platform %s, Qt %s; load average %.2f on %d CPUs\n",
                o.width, o.height, qPrintable(QGuiApplication::platformName()), qVersion(), load[0],
                QThread::idealThreadCount());

    const std::vector<QPointF> data = lossCurve(o.points, rng);
    const std::vector<Zoom> ranges = zooms(1, o.points, o.repetitions, rng);
    std::printf("\n%d zooms of a %d-point series (widths 0.05 %%–100 %% of the steps):\n", o.repetitions, o.points);
    report("TimeSeriesChart (min/max buckets at the plot's pixel width)", timeChart(data, ranges, o), true);

    // Worst case for the scan: the whole series visible.
    const std::vector<Zoom> whole(size_t(std::max(5, o.repetitions / 4)), Zoom{1.0, double(o.points)});
    report("TimeSeriesChart, the whole series in view (scan of every point)", timeChart(data, whole, o), true);

    if (o.comparatorPoints > 0) {
        const std::vector<QPointF> small = lossCurve(o.comparatorPoints, rng);
        const std::vector<Zoom> smallRanges = wideZooms(1, o.comparatorPoints, o.comparatorRepetitions, rng);
        std::printf("\nComparator, %d zooms of a %d-point series to 100/50/20/10 %% of it (same ranges for both):\n",
                    o.comparatorRepetitions, o.comparatorPoints);
        report("without downsampling (every point in range → replace)", timeAllPoints(small, smallRanges, o), true);
        report("TimeSeriesChart", timeChart(small, smallRanges, o), true);
    }
    return 0;
}

}  // namespace trainbench::bench
