// Reports of inference runs: a prediction run's report has no loss chart (it computes no loss, so
// its steps carry zeros) and counts examples, not samples; a load test's report draws its points
// as p50 and p99 latency against achieved QPS.
#include <gtest/gtest.h>

#include <algorithm>

#include "profiler/report/report.h"
#include "profiler/report/reportcharts.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/profiler/storetestutil.h"

namespace trainbench::profiler {
namespace {

bool hasChart(const std::vector<Chart>& charts, const std::string& suffix) {
    return std::any_of(charts.begin(), charts.end(), [&](const Chart& c) { return c.id.ends_with(suffix); });
}

TEST(InferenceReport, PredictionHasNoLossChartAndCountsExamples) {
    testutil::TempDir tmp;
    const std::string db = tmp.file("runs.db");
    RunSpec spec;
    spec.name = "predict";
    spec.kind = "predict";
    spec.config_json = "{}";
    RunId id;
    {
        RunWriter w(db, spec);
        id = w.runId();
        for (int64_t s = 1; s <= 5; ++s) {
            engine::StepRecord r;
            r.step = s;
            r.samples = 256;
            r.step_seconds = 0.05;
            r.input_seconds = 0.01;
            r.forward_seconds = 0.035;
            r.output_seconds = 0.005;
            r.wall_seconds = 0.05 * static_cast<double>(s);
            w.step(r);
        }
        w.finish(RunStatus::Completed, engine::RunSummary{});
    }
    auto store = RunStore::open(db, OpenMode::ReadOnly);
    const ReportData data = collectReport(store, std::vector<RunId>{id});
    const std::vector<Chart> charts = runCharts(data.runs.front());
    EXPECT_FALSE(hasChart(charts, "loss"));
    ASSERT_TRUE(hasChart(charts, "throughput"));
    const auto rate = std::find_if(charts.begin(), charts.end(), [](const Chart& c) { return c.id.ends_with("throughput"); });
    EXPECT_EQ(rate->y.label, "examples/s");
}

TEST(InferenceReport, LoadTestHasLatencyAgainstThroughput) {
    testutil::TempDir tmp;
    const std::string db = tmp.file("runs.db");
    RunSpec spec;
    spec.name = "loadtest";
    spec.kind = "serve";
    spec.config_json = "{}";
    RunId id;
    {
        RunWriter w(db, spec);
        id = w.runId();
        // Measured from the highest rate down: the chart still runs left to right.
        const double qps[] = {900, 300, 600};
        for (int64_t i = 0; i < 3; ++i) {
            LoadTestPoint p;
            p.point = i;
            p.scenario = "server";
            p.target_qps = qps[i];
            p.queries = 1000;
            p.achieved_qps = qps[i];
            p.p50_ms = qps[i] / 300.0;
            p.p99_ms = qps[i] / 100.0;
            w.loadTestPoint(p);
        }
        w.finish(RunStatus::Completed, engine::RunSummary{});
    }
    auto store = RunStore::open(db, OpenMode::ReadOnly);
    const ReportData data = collectReport(store, std::vector<RunId>{id});
    ASSERT_EQ(data.runs.front().loadTestPoints.size(), 3u);
    const std::vector<Chart> charts = runCharts(data.runs.front());
    EXPECT_FALSE(hasChart(charts, "loss"));
    const auto latency = std::find_if(charts.begin(), charts.end(), [](const Chart& c) { return c.id.ends_with("latency"); });
    ASSERT_NE(latency, charts.end());
    ASSERT_EQ(latency->series.size(), 2u);
    EXPECT_EQ(latency->series[1].name, "p99");
    ASSERT_EQ(latency->series[1].points.size(), 3u);
    EXPECT_DOUBLE_EQ(latency->series[1].points[0].x, 300.0);
    EXPECT_DOUBLE_EQ(latency->series[1].points[2].y, 9.0);
}

}  // namespace
}  // namespace trainbench::profiler
