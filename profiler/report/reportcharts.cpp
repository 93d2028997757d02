#include "profiler/report/reportcharts.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "profiler/compare/datascaling.h"
#include "profiler/format/numberformat.h"
#include "profiler/report/axisticks.h"
#include "profiler/report/downsample.h"
#include "profiler/report/report.h"
#include "profiler/report/reportformat.h"
#include "profiler/report/scaling.h"
#include "profiler/report/stepparts.h"

namespace trainbench::profiler {

namespace {

std::string idPrefix(const RunRow& r) { return "run-" + std::to_string(r.id.value) + "-"; }

// Evaluations by split, "test" first (the split the store's accuracy columns describe).
std::map<std::string, std::vector<const EvalSample*>> evalsBySplit(const std::vector<EvalSample>& evals) {
    std::map<std::string, std::vector<const EvalSample*>> out;
    for (const auto& e : evals) out[e.split].push_back(&e);
    return out;
}

std::vector<std::string> splitOrder(const std::map<std::string, std::vector<const EvalSample*>>& bySplit) {
    std::vector<std::string> order;
    if (bySplit.count("test")) order.push_back("test");
    for (const auto& [split, _] : bySplit)
        if (split != "test") order.push_back(split);
    return order;
}

std::string stepsNote(size_t steps, size_t buckets, const char* how) {
    if (steps <= buckets) return {};
    return std::string(how) + " of every " + fmtFixed(static_cast<double>(steps) / static_cast<double>(buckets), 1) +
           " steps (" + std::to_string(steps) + " steps recorded)";
}

// A few slow steps (warm-up, a stall) would flatten everything else to the floor: when the highest
// total is far above the typical one, the axis ends above the typical steps and the note says so.
void capOutliers(Chart& c) {
    std::vector<double> totals(c.series.front().points.size(), 0.0);
    for (const ChartSeries& s : c.series)
        for (size_t i = 0; i < totals.size() && i < s.points.size(); ++i)
            if (std::isfinite(s.points[i].y)) totals[i] += s.points[i].y;
    if (totals.size() < 10) return;
    std::vector<double> sorted = totals;
    std::sort(sorted.begin(), sorted.end());
    const double typical = sorted[sorted.size() * 95 / 100], highest = sorted.back();
    if (typical <= 0 || highest <= 2.5 * typical) return;
    const double cap = niceTicks(0.0, 1.6 * typical).hi;
    const auto above = std::count_if(totals.begin(), totals.end(), [&](double t) { return t > cap; });
    c.y.max = cap;
    const std::string cut = "axis cut at " + fmtFixed(cap, cap < 10 ? 1 : 0) + " ms: " + std::to_string(above) + " of " +
                            std::to_string(totals.size()) + " points go higher, up to " + fmtFixed(highest, 1) + " ms";
    c.note = c.note.empty() ? cut : c.note + "; " + cut;
}

std::optional<Chart> lossChart(const RunReport& r) {
    // A prediction computes no loss: its steps carry zeros, not a flat curve worth drawing.
    if (r.run.kind == "predict" && r.evals.empty()) return std::nullopt;
    Chart c;
    c.id = idPrefix(r.run) + "loss";
    c.title = "Loss, " + runLabel(r.run);
    c.x.label = "step";
    c.y.label = "loss";
    std::vector<ChartPoint> train;
    for (const auto& s : r.steps) train.push_back({static_cast<double>(s.step), s.loss});
    if (!train.empty()) {
        c.series.push_back({"training loss (per step)", minMaxBuckets(train, kLossBuckets), SeriesStyle::Line, 0});
        if (train.size() > 2 * kLossBuckets)
            c.note = stepsNote(train.size(), kLossBuckets, "training loss: lowest and highest");
    }
    const auto bySplit = evalsBySplit(r.evals);
    int colour = 1;
    for (const std::string& split : splitOrder(bySplit)) {
        std::vector<ChartPoint> pts;
        for (const auto* e : bySplit.at(split)) pts.push_back({static_cast<double>(e->step), e->loss});
        c.series.push_back({split + " loss (evaluation)", minMaxBuckets(pts, kEvalPoints / 2), SeriesStyle::LineMarkers, colour++});
    }
    if (c.series.empty()) return std::nullopt;
    return c;
}

std::optional<Chart> accuracyChart(const RunReport& r) {
    if (r.evals.empty()) return std::nullopt;
    Chart c;
    c.id = idPrefix(r.run) + "accuracy";
    c.title = "Accuracy, " + runLabel(r.run);
    c.x.label = "step";
    c.y = {.label = "accuracy", .format = AxisFormat::Percent, .min = {}, .max = {}, .includeZero = false};
    const auto bySplit = evalsBySplit(r.evals);
    double lastStep = 0;
    int colour = 0;
    for (const std::string& split : splitOrder(bySplit)) {
        std::vector<ChartPoint> pts;
        for (const auto* e : bySplit.at(split)) {
            pts.push_back({static_cast<double>(e->step), e->accuracy});
            lastStep = std::max(lastStep, static_cast<double>(e->step));
        }
        c.series.push_back({split + " accuracy", minMaxBuckets(pts, kEvalPoints / 2), SeriesStyle::LineMarkers, colour++});
    }
    if (r.run.target_accuracy) {
        const double first = c.series.front().points.front().x;
        c.series.push_back({"target " + fmtPercent(*r.run.target_accuracy, 1),
                            {{first, *r.run.target_accuracy}, {lastStep, *r.run.target_accuracy}},
                            SeriesStyle::Dashed, 6});
    }
    return c;
}

std::optional<Chart> breakdownChart(const RunReport& r) {
    if (r.steps.empty()) return std::nullopt;
    Chart c;
    c.id = idPrefix(r.run) + "breakdown";
    c.title = "Step time breakdown, " + runLabel(r.run);
    c.kind = ChartKind::StackedArea;
    c.x.label = "step";
    c.y.label = "ms per step";
    for (const StepPhase& part : kStepParts) {
        std::vector<ChartPoint> pts;
        for (const auto& s : r.steps) pts.push_back({static_cast<double>(s.step), 1e3 * (s.*part.seconds)});
        c.series.push_back({std::string(part.reportName), meanBuckets(pts, kBreakdownBuckets), SeriesStyle::Line, part.colour});
    }
    c.note = stepsNote(r.steps.size(), kBreakdownBuckets, "mean");
    capOutliers(c);
    return c;
}

std::optional<Chart> throughputChart(const RunReport& r) {
    if (r.steps.empty()) return std::nullopt;
    Chart c;
    c.id = idPrefix(r.run) + "throughput";
    c.title = "Throughput, " + runLabel(r.run);
    c.x.label = r.run.kind == "predict" ? "batch" : "step";
    c.y.label = r.run.kind == "predict" ? "examples/s" : "samples/s";
    // Over a group of steps, all its samples over all its time (as the store's steady-state figure
    // is taken): a mean of per-step rates would hide the slow steps that matter.
    const size_t n = r.steps.size(), buckets = std::min(n, kLevelBuckets);
    std::vector<ChartPoint> pts;
    for (size_t k = 0; k < buckets; ++k) {
        double x = 0, samples = 0, seconds = 0;
        const size_t first = k * n / buckets, last = (k + 1) * n / buckets;
        for (size_t i = first; i < last; ++i) {
            x += static_cast<double>(r.steps[i].step);
            samples += static_cast<double>(r.steps[i].samples);
            seconds += r.steps[i].step_seconds;
        }
        pts.push_back({x / static_cast<double>(last - first), seconds > 0 ? samples / seconds : std::nan("")});
    }
    c.series.push_back({n > buckets ? "samples/s (groups of steps)" : "samples/s (per step)", pts, SeriesStyle::Line, 0});
    if (r.run.throughput)
        c.series.push_back({"steady state " + fmtRate(*r.run.throughput) + " samples/s",
                            {{pts.front().x, *r.run.throughput}, {pts.back().x, *r.run.throughput}}, SeriesStyle::Dashed, 1});
    if (n > buckets)
        c.note = "samples over step time of every " + fmtFixed(static_cast<double>(n) / static_cast<double>(buckets), 1) +
                 " steps (" + std::to_string(n) + " steps recorded)";
    return c;
}

// A load test: p50 and p99 latency against the achieved QPS of its points.
std::optional<Chart> latencyChart(const RunReport& r) {
    std::vector<ChartPoint> p50, p99;
    for (const LoadTestPoint& p : r.loadTestPoints) {
        if (p.p50_ms) p50.push_back({p.achieved_qps, *p.p50_ms});
        if (p.p99_ms) p99.push_back({p.achieved_qps, *p.p99_ms});
    }
    if (p50.empty() && p99.empty()) return std::nullopt;
    const auto byQps = [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; };
    std::sort(p50.begin(), p50.end(), byQps);
    std::sort(p99.begin(), p99.end(), byQps);
    Chart c;
    c.id = idPrefix(r.run) + "latency";
    c.title = "Latency against throughput, " + runLabel(r.run);
    c.x.label = "achieved QPS";
    c.y.label = "latency (ms)";
    if (!p50.empty()) c.series.push_back({"p50", p50, SeriesStyle::LineMarkers, 0});
    if (!p99.empty()) c.series.push_back({"p99", p99, SeriesStyle::LineMarkers, 1});
    return c;
}

// Each run's accuracy on its main split over `x` (step or training seconds).
std::optional<Chart> accuracyOverlay(const ReportData& data, bool byTime) {
    Chart c;
    c.id = byTime ? "compare-accuracy-time" : "compare-accuracy-step";
    c.title = byTime ? "Accuracy by training time" : "Accuracy by step";
    c.x.label = byTime ? "training seconds (evaluations excluded)" : "step";
    c.y = {.label = "accuracy", .format = AxisFormat::Percent, .min = {}, .max = {}, .includeZero = false};
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const auto bySplit = evalsBySplit(data.runs[i].evals);
        if (bySplit.empty()) continue;
        const std::string split = splitOrder(bySplit).front();
        std::vector<ChartPoint> pts;
        for (const auto* e : bySplit.at(split))
            pts.push_back({byTime ? e->wall_seconds : static_cast<double>(e->step), e->accuracy});
        c.series.push_back({runLabel(data.runs[i].run) + (split == "test" ? "" : " (" + split + ")"),
                            minMaxBuckets(pts, kEvalPoints / 2), SeriesStyle::LineMarkers, static_cast<int>(i)});
    }
    if (c.series.empty()) return std::nullopt;
    return c;
}

std::optional<Chart> breakdownBars(const ReportData& data) {
    Chart c;
    c.id = "compare-breakdown";
    c.title = "Mean step time by part";
    c.kind = ChartKind::StackedBars;
    c.x.label = "ms per step (after warm-up)";
    std::vector<std::optional<MeanStep>> means;
    for (const RunReport& r : data.runs) {
        means.push_back(meanStep(r.steps));
        if (means.back()) c.categories.push_back(runLabel(r.run));
    }
    if (c.categories.empty()) return std::nullopt;
    for (size_t k = 0; k < kStepParts.size(); ++k) {
        ChartSeries s{std::string(kStepParts[k].reportName), {}, SeriesStyle::Line, kStepParts[k].colour};
        double i = 0;
        for (const auto& m : means)
            if (m) s.points.push_back({i++, 1e3 * m->partSeconds[k]});
        c.series.push_back(std::move(s));
    }
    return c;
}

std::optional<Chart> scalingChart(const ReportData& data) {
    const Scaling s = scalingOf(data);
    if (!s.curve || !s.baseline) return std::nullopt;
    Chart c;
    c.id = "compare-scaling";
    c.title = "Throughput by replicas";
    c.x = {.label = "replicas", .format = AxisFormat::Number, .min = 0.0, .max = {}, .includeZero = true, .integer = true};
    c.y.label = "samples/s (steady state)";
    ChartSeries measured{"measured", {}, SeriesStyle::LineMarkers, 0};
    double maxReplicas = 0;
    for (const ScalingRow& r : s.rows) {
        if (!r.replicas || !r.throughput) continue;
        measured.points.push_back({static_cast<double>(*r.replicas), *r.throughput});
        maxReplicas = std::max(maxReplicas, static_cast<double>(*r.replicas));
    }
    const ScalingRow& base = s.rows[*s.baseline];
    const double r0 = static_cast<double>(*base.replicas);
    ChartSeries ideal{"ideal (linear from " + runLabel(data.runs[base.run].run) + ")", {}, SeriesStyle::Dashed, 6};
    ideal.points = {{r0, *base.throughput}, {maxReplicas, *base.throughput * maxReplicas / r0}};
    c.series.push_back(std::move(measured));
    c.series.push_back(std::move(ideal));
    return c;
}

std::optional<Chart> dataScalingChart(const ReportData& data) {
    std::vector<DataScalingRun> runs;
    for (const RunReport& r : data.runs) runs.push_back(dataScalingRun(r.run, r.evals));
    const DataScaling d = dataScalingOf(runs, DataScalingMetric::TestError);
    if (d.curves.empty()) return std::nullopt;
    Chart c;
    c.id = "compare-data-scaling";
    c.title = "Test error by training examples";
    c.x = {.label = "training examples (log scale)", .format = AxisFormat::Number, .min = {}, .max = {},
           .includeZero = false, .integer = false, .log2 = true};
    c.y = {.label = "test error (1 \u2212 best accuracy)", .format = AxisFormat::Percent, .min = {}, .max = {},
           .includeZero = false};
    bool repeats = false;
    for (size_t i = 0; i < d.curves.size(); ++i) {
        const DataScalingCurve& curve = d.curves[i];
        const int colour = static_cast<int>(i);
        ChartSeries mean{curve.label, {}, SeriesStyle::LineMarkers, colour};
        ChartSeries spread{curve.label + ": lowest to highest run", {}, SeriesStyle::Spread, colour};
        for (const DataScalingPoint& p : curve.points) {
            const double x = static_cast<double>(p.examples);
            mean.points.push_back({x, p.mean});
            if (p.runs.size() > 1) spread.points.insert(spread.points.end(), {{x, p.min}, {x, p.max}});
        }
        c.series.push_back(std::move(mean));
        if (!spread.points.empty()) {
            c.series.push_back(std::move(spread));
            repeats = true;
        }
        if (curve.fit) {
            // On a log x axis and a linear y the law is a curve: drawn through 32 points.
            const double lo = std::log2(static_cast<double>(curve.points.front().examples));
            const double hi = std::log2(static_cast<double>(curve.points.back().examples));
            ChartSeries fit{curve.label + ": power law, slope " + fmtFixed(curve.fit->slope, 3) + " (R\u00B2 " +
                                fmtFixed(curve.fit->r2, 3) + ")",
                            {}, SeriesStyle::Dashed, colour};
            for (int k = 0; k <= 32; ++k) {
                const double x = std::exp2(lo + (hi - lo) * k / 32.0);
                fit.points.push_back({x, curve.fit->at(x)});
            }
            c.series.push_back(std::move(fit));
        }
    }
    c.note = std::string("a point: the mean of the runs at that size") + (repeats ? " (bars: lowest to highest seed)" : "") +
             "; power law: least squares over every run on log\u2013log axes";
    return c;
}

}  // namespace

std::vector<Chart> runCharts(const RunReport& run) {
    std::vector<Chart> out;
    for (auto chart : {lossChart(run), accuracyChart(run), breakdownChart(run), throughputChart(run), latencyChart(run)})
        if (chart) out.push_back(std::move(*chart));
    return out;
}

std::vector<Chart> comparisonCharts(const ReportData& data) {
    std::vector<Chart> out;
    if (data.runs.size() < 2) return out;
    for (auto chart : {accuracyOverlay(data, false), accuracyOverlay(data, true), breakdownBars(data), scalingChart(data),
                       dataScalingChart(data)})
        if (chart) out.push_back(std::move(*chart));
    return out;
}

std::vector<Chart> reportCharts(const ReportData& data) {
    std::vector<Chart> out;
    for (const RunReport& r : data.runs)
        for (Chart& c : runCharts(r)) out.push_back(std::move(c));
    for (Chart& c : comparisonCharts(data)) out.push_back(std::move(c));
    return out;
}

}  // namespace trainbench::profiler
