#pragma once
// `trainbench-ui-bench redraw`: a 1,000,000-point series in a TimeSeriesChart, zoomed to new x
// ranges; each repetition times re-bucketing, QLineSeries::replace and rendering the chart into
// an image, against the 100 ms goal; and the same without downsampling, as the comparator.
namespace trainbench::bench {

struct RedrawOptions {
    int points = 1'000'000;
    int repetitions = 40;
    int width = 1200;
    int height = 500;
    int comparatorPoints = 100'000;  // all points in range handed to Qt Charts: kept smaller
    int comparatorRepetitions = 8;
    unsigned seed = 7;
};

int runRedrawBench(const RedrawOptions& options);

}  // namespace trainbench::bench
