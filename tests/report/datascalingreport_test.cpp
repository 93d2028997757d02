// Data scaling in the report and the CLI, from a run store of a data.fraction sweep recorded with
// the real RunWriter: the chart (log2 axis labelled with counts, a mean per size, the seeds' spread,
// the power law), the HTML table and fit, and `trainbench-cli report --data-scaling` as text and JSON.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "profiler/report/axisticks.h"
#include "profiler/report/report.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/integration/clirunner.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using trainbench::testing::runCli;

using testutil::has;

// Error = 0.4 x (examples / 1000)^-0.3 exactly at every size, but the two seeds at 2000 examples,
// which sit 1 point either side of it.
double lawError(int64_t examples) { return 0.4 * std::pow(static_cast<double>(examples) / 1000.0, -0.3); }

RunId record(const std::string& db, double fraction, int seed, int64_t examples, double error) {
    RunSpec spec;
    spec.name = "scale-fraction" + std::to_string(fraction).substr(0, 5) + "-seed" + std::to_string(seed);
    spec.config_json = nlohmann::json{{"name", spec.name}, {"seed", seed}, {"data", {{"fraction", fraction}}},
                                      {"model", {{"preset", "logreg"}}}}
                           .dump();
    spec.train_examples = examples;
    spec.data_fraction = fraction;
    RunWriter w(db, spec);
    engine::EvalRecord e;
    e.step = 50;
    e.split = "test";
    e.accuracy = 1.0 - error;
    e.loss = 2.0 * error;
    w.eval(e);
    engine::RunSummary s;
    s.steps = 50;
    s.evaluations = 1;
    s.final_accuracy = s.best_accuracy = 1.0 - error;
    w.finish(RunStatus::Completed, s);
    return w.runId();
}

class DataScalingReport : public ::testing::Test {
protected:
    void SetUp() override {
        ids.push_back(record(db, 0.125, 1, 1000, lawError(1000)));
        ids.push_back(record(db, 0.25, 1, 2000, lawError(2000) - 0.01));
        ids.push_back(record(db, 0.25, 2, 2000, lawError(2000) + 0.01));
        ids.push_back(record(db, 0.5, 1, 4000, lawError(4000)));
        ids.push_back(record(db, 1.0, 1, 8000, lawError(8000)));
    }
    ReportData data() {
        RunStore store = RunStore::open(db);
        return collectReport(store, ids);
    }
    trainbench::testing::TempDir dir;
    std::string db = (dir.path / "runs.db").string();
    std::vector<RunId> ids;
};

TEST(Log2Axis, TicksAtWholePowersOfTwoLabelledAsCounts) {
    const AxisTicks t = log2Ticks(std::log2(1875.0), std::log2(60000.0));
    EXPECT_EQ(t.ticks, (std::vector<double>{10, 11, 12, 13, 14, 15, 16}));
    EXPECT_EQ(log2TickLabel(11), "2048");
    EXPECT_EQ(log2TickLabel(16), "65536");
    EXPECT_EQ(log2TickLabel(24), "16.8M");
    const AxisTicks wide = log2Ticks(0, 20);  // 20 octaves: a tick every 3
    EXPECT_EQ(wide.step, 3);
    EXPECT_EQ(wide.ticks.back(), 21);
}

TEST_F(DataScalingReport, TheChartDrawsMeansSpreadAndPowerLaw) {
    const std::vector<Chart> charts = reportCharts(data());
    const Chart* c = nullptr;
    for (const Chart& chart : charts)
        if (chart.id == "compare-data-scaling") c = &chart;
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->x.log2);
    ASSERT_EQ(c->series.size(), 3u);  // means, spread, power law
    const ChartSeries& mean = c->series[0];
    EXPECT_EQ(mean.name, "scale");
    ASSERT_EQ(mean.points.size(), 4u);
    EXPECT_DOUBLE_EQ(mean.points[1].x, 2000);
    EXPECT_NEAR(mean.points[1].y, lawError(2000), 1e-12);  // the two seeds' mean
    const ChartSeries& spread = c->series[1];
    EXPECT_EQ(spread.style, SeriesStyle::Spread);
    ASSERT_EQ(spread.points.size(), 2u);
    EXPECT_NEAR(spread.points[0].y, lawError(2000) - 0.01, 1e-12);
    EXPECT_NEAR(spread.points[1].y, lawError(2000) + 0.01, 1e-12);
    const ChartSeries& fit = c->series[2];
    EXPECT_EQ(fit.style, SeriesStyle::Dashed);
    EXPECT_TRUE(has(fit.name, "slope -0.300")) << fit.name;  // the seeds' spread is symmetric in value, not in log: close
    EXPECT_NEAR(fit.points.front().y, lawError(1000), 2e-3);
    EXPECT_NEAR(fit.points.back().y, lawError(8000), 2e-3);

    const std::string svg = chartSvg(*c);
    for (const char* tick : {">1024</text>", ">2048</text>", ">4096</text>", ">8192</text>"}) EXPECT_TRUE(has(svg, tick)) << tick;
    EXPECT_TRUE(has(svg, "training examples (log scale)"));
    // Equal ratios of examples are equal distances: the x of each mean, one octave apart.
    const std::string csv = chartCsv(*c);
    EXPECT_TRUE(has(csv, "scale,2000,"));
    EXPECT_TRUE(has(csv, "scale: lowest to highest run,2000,"));
}

TEST_F(DataScalingReport, TheHtmlHasTheTableAndTheFit) {
    const std::string html = renderHtml(data());
    EXPECT_TRUE(has(html, "<h3>Data scaling</h3>"));
    EXPECT_TRUE(has(html, "examples^-0.30"));
    EXPECT_TRUE(has(html, "doubling the examples leaves 81.")) << "2^-0.3 = 81.2 %";
    EXPECT_TRUE(has(html, ">0.125<"));
    EXPECT_TRUE(has(html, ">8000<"));
    EXPECT_TRUE(has(html, "Test error by training examples"));
}

TEST_F(DataScalingReport, TheCliPrintsTheCurveAsTextAndJson) {
    auto r = runCli({"report", "1", "2", "3", "4", "5", "--data-scaling", "--db", db}, dir.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(has(r.out, "test error against training examples: 1 curve(s)")) << r.out;
    EXPECT_TRUE(has(r.out, "scale\n"));
    EXPECT_TRUE(has(r.out, "0.25           2000      2")) << r.out;
    EXPECT_TRUE(has(r.out, "power law: test error \u2248 ")) << r.out;

    r = runCli({"report", "1", "2", "3", "4", "5", "--data-scaling", "--json", "--metric", "loss", "--db", db}, dir.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["metric"], "test loss");
    const nlohmann::json& points = j["curves"][0]["points"];
    ASSERT_EQ(points.size(), 4u);
    EXPECT_EQ(points[1]["examples"], 2000);
    EXPECT_EQ(points[1]["runs"], nlohmann::json::array({2, 3}));
    EXPECT_NEAR(points[0]["mean"].get<double>(), 2.0 * lawError(1000), 1e-12);  // loss = 2 x error here
    EXPECT_NEAR(j["curves"][0]["power_law"]["slope"].get<double>(), -0.3, 2e-3);

    // Runs of one size: nothing to chart, said plainly.
    r = runCli({"report", "2", "3", "--data-scaling", "--db", db}, dir.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(has(r.out, "no data-scaling curve")) << r.out;
}

}  // namespace
}  // namespace trainbench::profiler
