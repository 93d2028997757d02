// The HTML report from a real run store: every section with the stored numbers, one inline SVG per
// chart with bounded polylines, the comparison of two runs (config diff, scaling), escaping, and
// errors that name the run or the file.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "profiler/format/numberformat.h"
#include "profiler/report/reportcharts.h"
#include "profiler/report/report.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using testutil::count;
using testutil::mirroredFixture;
using testutil::readFile;
using testutil::recordFixtureRun;
using testutil::RunFixture;
using testutil::TempDir;

using testutil::has;

std::string between(const std::string& text, const std::string& from, const std::string& to) {
    const size_t a = text.find(from);
    if (a == std::string::npos) return {};
    const size_t b = text.find(to, a);
    return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

class ReportHtml : public ::testing::Test {
protected:
    TempDir dir;
    std::string db = dir.file("runs.db");
};

TEST_F(ReportHtml, OneRunHasEverySectionWithTheStoredNumbers) {
    const RunId id = recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    const ReportData data = collectReport(store, {id});
    const std::string html = renderHtml(data);
    const RunRow run = *store.run(id);

    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    for (const char* section : {">Summary</h2>", ">Run #1 alpha</h2>", ">Verdict</h3>", ">Timeline</h4>", ">Actions, best first</h4>",
                                ">Top ops by time</h3>", ">Memory</h3>", ">Other recorded facts</h3>", ">Resolved experiment</h3>"})
        EXPECT_TRUE(has(html, section)) << section;
    EXPECT_FALSE(has(html, "id=\"comparison\""));  // one run: nothing to compare

    // The summary, formatted from the runs row.
    EXPECT_TRUE(has(html, "<td>87.31 %</td>"));                          // final accuracy 0.8731
    EXPECT_TRUE(has(html, "<td>" + std::to_string(*run.steps) + "</td>"));
    EXPECT_TRUE(has(html, "<td>5120</td>"));                             // throughput
    EXPECT_TRUE(has(html, "<td>cpu:2</td>"));
    EXPECT_TRUE(has(html, "<td>max_steps</td>"));
    EXPECT_TRUE(has(html, "(target 85.00 %)"));                          // time to target, with the target
    EXPECT_TRUE(has(html, "<td>input (high)</td>"));                     // runs.verdict
    // The verdict: label, summary, evidence sentences, timeline, actions with their key changes.
    EXPECT_TRUE(has(html, "input-bound (high)"));
    EXPECT_TRUE(has(html, "Input-bound: 29.7 % of step time waiting for input"));
    EXPECT_TRUE(has(html, "<li>29.7 % of step time waiting for input (&gt;= 20 % is highly input-bound)</li>"));
    EXPECT_TRUE(has(html, "Compute-bound: 61.0 % of op time right of the ridge"));  // a further finding
    EXPECT_TRUE(has(html, "Warm-up: nothing stands out"));
    EXPECT_TRUE(has(html, "<b>Prefetch batches on a background thread</b>"));
    EXPECT_TRUE(has(html, "<code>data.pipeline.prefetch: 0 \u2192 2</code>"));
    EXPECT_TRUE(has(html, "Expected: the input wait hides behind the step (throughput \u00D71.42)"));
    EXPECT_TRUE(has(html, "No change to the experiment file"));
    // Ops: GFLOP/s = flops * calls / seconds; intensity = flops / bytes.
    // 2 * 64 * 784 * 512 FLOP per call, 1000 calls in 0.75 s: 68.5 GFLOP/s.
    EXPECT_TRUE(has(html, "<td class=\"num\" align=\"right\">68.5</td>"));
    EXPECT_TRUE(has(html, "75.0 %"));  // its share of op time
    // Which steps they cover: ops.first_step to the last step.
    EXPECT_TRUE(has(between(html, ">Top ops by time</h3>", "<h3"),
                    "Steps 21\u2013" + std::to_string(*run.steps) + ": the warm-up before step 21 is left out"));
    // Memory attributes, as bytes and as stored.
    EXPECT_TRUE(has(html, "2.0 MiB"));
    EXPECT_TRUE(has(html, "(2143272 B)"));
    EXPECT_TRUE(has(html, "host RAM"));
    EXPECT_TRUE(has(html, "<code>input.prefetch</code>"));
    // The resolved config, pretty-printed.
    EXPECT_TRUE(has(html, "&quot;batch_size&quot;: 64"));
    // Self-contained: nothing fetched from anywhere.
    EXPECT_FALSE(has(html, "src=\""));
    EXPECT_FALSE(has(html, "href=\"http"));
    EXPECT_FALSE(has(html, "<script"));
}

TEST_F(ReportHtml, OneInlineSvgPerChartWithBoundedPolylines) {
    RunFixture big;
    big.steps = 20000;  // 20000 steps: the loss curve must be downsampled
    big.evalEvery = 1000;
    const RunId a = recordFixtureRun(db, big);
    const RunId b = recordFixtureRun(db, mirroredFixture());
    RunStore store = RunStore::open(db);
    const ReportData data = collectReport(store, {a, b});
    const std::vector<Chart> charts = reportCharts(data);
    const std::string html = renderHtml(data);
    EXPECT_EQ(count(html, "<svg "), charts.size());
    // Per run: loss, accuracy, breakdown, throughput; comparison: accuracy by step and by time,
    // breakdown by run, scaling (the runs have 1 and 2 replicas).
    std::set<std::string> ids;
    for (const Chart& c : charts) ids.insert(c.id);
    EXPECT_EQ(ids, (std::set<std::string>{"run-1-loss", "run-1-accuracy", "run-1-breakdown", "run-1-throughput",
                                          "run-2-loss", "run-2-accuracy", "run-2-breakdown", "run-2-throughput",
                                          "compare-accuracy-step", "compare-accuracy-time", "compare-breakdown",
                                          "compare-scaling"}));
    for (const Chart& c : charts) EXPECT_TRUE(has(html, "id=\"chart-" + c.id + "\"")) << c.id;
    static const std::regex polyline("<polyline[^>]* points=\"([^\"]*)\"");
    size_t lines = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), polyline); it != std::sregex_iterator(); ++it, ++lines) {
        const std::string pts = (*it)[1];
        EXPECT_LE(std::count(pts.begin(), pts.end(), ','), 2 * static_cast<long>(kLossBuckets));
    }
    EXPECT_GE(lines, 8u);
    // The 20000-step loss curve is there, downsampled, and says so.
    EXPECT_TRUE(has(html, "training loss: lowest and highest of every 100.0 steps (20000 steps recorded)"));
}

TEST_F(ReportHtml, TwoRunsAreComparedWithExactlyTheDifferingConfigKeys) {
    const RunId a = recordFixtureRun(db, RunFixture{});
    const RunId b = recordFixtureRun(db, mirroredFixture());
    RunStore store = RunStore::open(db);
    const std::string html = renderHtml(collectReport(store, std::vector<std::string>{"alpha", "2"}));
    EXPECT_TRUE(has(html, "<h2 id=\"comparison\">Comparison</h2>"));
    EXPECT_TRUE(has(html, "<h2 id=\"run-" + std::to_string(a.value) + "\" class=\"newpage\">"));
    EXPECT_TRUE(has(html, "<h2 id=\"run-" + std::to_string(b.value) + "\" class=\"newpage\">"));

    const std::string diff = between(html, "<table class=\"grid diff\"", "</table>");
    ASSERT_FALSE(diff.empty());
    static const std::regex keyCell("<tr><td><code>([^<]*)</code></td>");
    std::set<std::string> keys;
    for (auto it = std::sregex_iterator(diff.begin(), diff.end(), keyCell); it != std::sregex_iterator(); ++it) keys.insert((*it)[1]);
    EXPECT_EQ(keys, (std::set<std::string>{"name", "strategy.bucket_mb", "strategy.replicas", "strategy.type", "train.batch_size"}));
    EXPECT_TRUE(has(diff, "<td><i>absent</i></td><td><code>4</code></td>"));  // bucket_mb only in beta

    // Scaling: 8704 samples/s on 2 replicas against 5120 on 1 is 1.70x, 85.0 % of linear.
    const std::string scaling = between(html, "<h3>Scaling</h3>", "</table>");
    EXPECT_TRUE(has(scaling, "1.70\u00D7"));
    EXPECT_TRUE(has(scaling, "85.0 %"));
    EXPECT_TRUE(has(scaling, "100.0 %"));  // the baseline
}

TEST_F(ReportHtml, NamesFromTheStoreAreEscaped) {
    RunFixture f;
    f.name = "<script>alert('x')</script> & co";
    f.config["name"] = f.name;
    f.config["note"] = "</pre><script>bad()</script>";
    const RunId id = recordFixtureRun(db, f);
    RunStore store = RunStore::open(db);
    const std::string html = renderHtml(collectReport(store, {id}));
    EXPECT_FALSE(has(html, "<script"));
    EXPECT_FALSE(has(html, "</pre><script>"));
    EXPECT_TRUE(has(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"));
    EXPECT_EQ(count(html, "</pre>"), 1u);  // only the config block's own
}

TEST_F(ReportHtml, WhatIsNotRecordedSaysSo) {
    RunFixture f;
    f.classified = false;
    f.status = RunStatus::Failed;
    f.message = "step 1000: loss became NaN";
    const RunId id = recordFixtureRun(db, f);
    RunStore store = RunStore::open(db);
    const std::string html = renderHtml(collectReport(store, {id}));
    EXPECT_TRUE(has(html, "<span class=\"status-failed\">failed</span>"));
    EXPECT_TRUE(has(html, "step 1000: loss became NaN"));
    EXPECT_TRUE(has(html, "Not recorded: the run was never classified"));
    EXPECT_TRUE(has(between(html, ">Top ops by time</h3>", "<h3"), "not recorded"));
    EXPECT_TRUE(has(between(html, ">Memory</h3>", "<h3"), "not recorded"));
    EXPECT_TRUE(has(html, "<td>not recorded</td>"));  // verdict column, host-less fields
    // No price, no cost: the row says so rather than showing $0.
    EXPECT_TRUE(has(between(html, "<b>cost</b>", "</tr>"), "not recorded"));
    EXPECT_FALSE(has(html, "$"));
}

TEST_F(ReportHtml, SummaryShowsTheClockAndTheCostTheStoreHolds) {
    RunFixture f;
    f.pricePerHour = 2.0;
    const RunId id = recordFixtureRun(db, f);
    RunStore store = RunStore::open(db);
    const auto row = store.run(id);
    ASSERT_TRUE(row && row->cost) << "a priced run is billed when it ends";
    const std::string html = renderHtml(collectReport(store, {id}));
    EXPECT_TRUE(has(between(html, "<b>cost</b>", "</tr>"), formatMoney(*row->cost))) << formatMoney(*row->cost);
    EXPECT_TRUE(has(between(html, "<b>clock</b>", "</tr>"), "wall"));
    EXPECT_TRUE(has(between(html, "<b>warm start from run</b>", "</tr>"), "none (trained from scratch)"));
}

TEST_F(ReportHtml, UnknownRunIsAnErrorNamingIt) {
    recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    try {
        collectReport(store, std::vector<std::string>{"alpha", "no-such-run"});
        FAIL() << "expected ReportError";
    } catch (const ReportError& e) {
        EXPECT_TRUE(has(e.what(), "'no-such-run'")) << e.what();
        EXPECT_TRUE(has(e.what(), db)) << e.what();
    }
    try {
        collectReport(store, {RunId{42}});
        FAIL() << "expected ReportError";
    } catch (const ReportError& e) {
        EXPECT_TRUE(has(e.what(), "no run 42")) << e.what();
    }
    EXPECT_THROW(collectReport(store, std::vector<RunId>{}), ReportError);
    EXPECT_EQ(collectReport(store, std::vector<std::string>{"alpha", "1"}).runs.size(), 1u);  // the same run twice
}

TEST_F(ReportHtml, WritesTheFileWholeOrNamesThePathItCouldNotWrite) {
    const RunId id = recordFixtureRun(db, RunFixture{});
    RunStore store = RunStore::open(db);
    const ReportData data = collectReport(store, {id});
    const std::string out = dir.file("report.html");
    writeHtml(data, out);
    EXPECT_EQ(readFile(out), renderHtml(data));
    const std::string bad = dir.file("no-such-folder/report.html");
    try {
        writeHtml(data, bad);
        FAIL() << "expected ReportError";
    } catch (const ReportError& e) {
        EXPECT_TRUE(has(e.what(), bad)) << e.what();
        EXPECT_TRUE(has(e.what(), "report not saved")) << e.what();
    }
    // Charts on their own: SVG and CSV files.
    const Chart chart = reportCharts(data).front();
    writeChartSvg(chart, dir.file("c.svg"));
    writeChartCsv(chart, dir.file("c.csv"));
    EXPECT_EQ(readFile(dir.file("c.svg")), chartSvg(chart));
    EXPECT_EQ(readFile(dir.file("c.csv")).rfind("series,x,y\ntraining loss (per step),1,", 0), 0u);
}

}  // namespace
}  // namespace trainbench::profiler
