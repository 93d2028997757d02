// The pure C++ chart writer: round ticks, bounded downsampling that keeps the extremes, SVG that
// escapes what it is given and draws each series once, CSV of the points, and the config diff.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "profiler/report/axisticks.h"
#include "profiler/report/configdiff.h"
#include "profiler/report/downsample.h"
#include "profiler/report/report.h"
#include "tests/report/reportfixture.h"

namespace trainbench::profiler {
namespace {

using testutil::count;

std::vector<ChartPoint> noisy(size_t n) {
    std::vector<ChartPoint> pts;
    for (size_t i = 0; i < n; ++i) pts.push_back({static_cast<double>(i + 1), std::sin(0.37 * static_cast<double>(i))});
    return pts;
}

// Point counts of every polyline in an SVG.
std::vector<size_t> polylinePoints(const std::string& svg) {
    std::vector<size_t> out;
    static const std::regex polyline("<polyline[^>]* points=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it) {
        const std::string pts = (*it)[1];
        out.push_back(static_cast<size_t>(std::count(pts.begin(), pts.end(), ',')));
    }
    return out;
}

TEST(AxisTicks, CoverTheRangeWithRoundSteps) {
    const AxisTicks t = niceTicks(3.2, 587.0, 5);
    EXPECT_LE(t.lo, 3.2);
    EXPECT_GE(t.hi, 587.0);
    EXPECT_DOUBLE_EQ(t.step, 200.0);  // 117 per tick rounds up to 200
    ASSERT_GE(t.ticks.size(), 2u);
    EXPECT_DOUBLE_EQ(t.ticks.front(), 0.0);
    EXPECT_DOUBLE_EQ(t.ticks.back(), 600.0);
    EXPECT_EQ(niceTicks(0.781, 0.862, 5).step, 0.02);
    EXPECT_EQ(niceTicks(0, 2, 5, /*integer=*/true).step, 1.0);
    EXPECT_EQ(tickLabel(0.85, 0.05, AxisFormat::Percent), "85 %");
    EXPECT_EQ(tickLabel(40000, 10000, AxisFormat::Number), "40k");
    EXPECT_EQ(tickLabel(0.25, 0.25, AxisFormat::Number), "0.25");
    const AxisTicks flat = niceTicks(5, 5);
    EXPECT_LT(flat.lo, 5);
    EXPECT_GT(flat.hi, 5);
}

TEST(Downsample, MinMaxBucketsAreBoundedAndKeepTheExtremes) {
    std::vector<ChartPoint> pts = noisy(100000);
    pts[77777].y = 50.0;   // one spike must survive
    pts[12345].y = -40.0;
    const auto out = minMaxBuckets(pts, 200);
    EXPECT_LE(out.size(), 400u);
    EXPECT_GE(out.size(), 200u);
    double hi = -1e9, lo = 1e9;
    for (size_t i = 0; i < out.size(); ++i) {
        hi = std::max(hi, out[i].y);
        lo = std::min(lo, out[i].y);
        if (i > 0) {
            EXPECT_GE(out[i].x, out[i - 1].x);  // still in step order
        }
    }
    EXPECT_EQ(hi, 50.0);
    EXPECT_EQ(lo, -40.0);
    EXPECT_EQ(minMaxBuckets(noisy(300), 200).size(), 300u);  // short series untouched
}

TEST(Downsample, MeanBucketsAverageAndLeaveGapsForNaN) {
    std::vector<ChartPoint> pts;
    for (int i = 0; i < 1000; ++i) pts.push_back({static_cast<double>(i), i < 500 ? 1.0 : 3.0});
    const auto out = meanBuckets(pts, 100);
    ASSERT_EQ(out.size(), 100u);
    EXPECT_DOUBLE_EQ(out.front().y, 1.0);
    EXPECT_DOUBLE_EQ(out.back().y, 3.0);
    EXPECT_DOUBLE_EQ(out.front().x, 4.5);
    std::vector<ChartPoint> nan(40, {0.0, std::numeric_limits<double>::quiet_NaN()});
    EXPECT_TRUE(std::isnan(meanBuckets(nan, 4).front().y));
}

TEST(SvgChart, DrawsEachSeriesWithAxesLegendAndEscapedText) {
    Chart c;
    c.id = "t";
    c.title = "Loss of <script>alert(1)</script> & co";
    c.x.label = "step";
    c.y.label = "loss";
    c.series.push_back({"run <b>", minMaxBuckets(noisy(5000), 200), SeriesStyle::Line, -1});
    c.series.push_back({"ideal", {{0, 0}, {5000, 1}}, SeriesStyle::Dashed, -1});
    const std::string svg = chartSvg(c);
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    EXPECT_EQ(count(svg, "<svg"), 1u);
    EXPECT_EQ(svg.find("<script>"), std::string::npos);
    EXPECT_EQ(svg.find("<b>"), std::string::npos);
    EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"), std::string::npos);
    EXPECT_NE(svg.find("run &lt;b&gt;"), std::string::npos);  // the legend
    EXPECT_NE(svg.find(">step</text>"), std::string::npos);    // axis labels
    EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
    EXPECT_NE(svg.find(">5000</text>"), std::string::npos);    // a round tick at the end of the x axis
    EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
    const auto lines = polylinePoints(svg);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_LE(lines[0], 400u);
    EXPECT_GE(lines[0], 200u);
    EXPECT_EQ(lines[1], 2u);
}

TEST(SvgChart, ANaNIsAGapNotAPoint) {
    Chart c;
    c.series.push_back({"loss", {{1, 1}, {2, 0.5}, {3, std::nan("")}, {4, 0.4}, {5, 0.3}}, SeriesStyle::Line, -1});
    const auto lines = polylinePoints(chartSvg(c));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], 2u);
    EXPECT_EQ(lines[1], 2u);
    EXPECT_EQ(chartSvg(c).find("nan"), std::string::npos);
}

TEST(SvgChart, StackedKindsDrawOneShapePerLayerOrSegment) {
    Chart area;
    area.kind = ChartKind::StackedArea;
    for (int k = 0; k < 3; ++k) area.series.push_back({"part " + std::to_string(k), {{1, 1}, {2, 2}, {3, 1}}, SeriesStyle::Line, k});
    EXPECT_EQ(count(chartSvg(area), "<polygon"), 3u);
    Chart bars;
    bars.kind = ChartKind::StackedBars;
    bars.categories = {"#1 a", "#2 b"};
    bars.series.push_back({"input", {{0, 1.5}, {1, 0.5}}, SeriesStyle::Line, 0});
    bars.series.push_back({"forward", {{0, 2.0}, {1, 0.0}}, SeriesStyle::Line, 1});
    const std::string svg = chartSvg(bars);
    EXPECT_NE(svg.find(">#1 a</text>"), std::string::npos);
    EXPECT_NE(svg.find(">3.50</text>"), std::string::npos);  // the first bar's total
    EXPECT_NE(svg.find(">0.50</text>"), std::string::npos);
}

TEST(ChartCsv, OneRowPerPointQuotedWhereNeeded) {
    Chart c;
    c.series.push_back({"a, \"quoted\"", {{1, 0.5}, {2, std::nan("")}}, SeriesStyle::Line, -1});
    EXPECT_EQ(chartCsv(c), "series,x,y\n\"a, \"\"quoted\"\"\",1,0.5\n\"a, \"\"quoted\"\"\",2,\n");
    Chart bars;
    bars.kind = ChartKind::StackedBars;
    bars.categories = {"#1 a"};
    bars.series.push_back({"input", {{0, 1.25}}, SeriesStyle::Line, 0});
    EXPECT_EQ(chartCsv(bars), "series,category,value\ninput,#1 a,1.25\n");
}

TEST(ConfigDiff, ListsExactlyTheKeysThatDiffer) {
    const nlohmann::json a = {{"name", "a"}, {"train", {{"batch_size", 64}, {"epochs", 1}}},
                              {"model", {{"layers", {{{"units", 32}}, {{"units", 10}}}}}}};
    nlohmann::json b = a;
    b["name"] = "b";
    b["train"]["batch_size"] = 128;
    b["model"]["layers"][0]["units"] = 64;
    b["strategy"] = {{"type", "mirrored"}};
    const auto diff = configDiff({a.dump(), b.dump()});
    std::vector<std::string> keys;
    for (const auto& d : diff) keys.push_back(d.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"model.layers[0].units", "name", "strategy.type", "train.batch_size"}));
    EXPECT_EQ(diff[3].values[0], "64");
    EXPECT_EQ(diff[3].values[1], "128");
    EXPECT_FALSE(diff[2].values[0].has_value());  // absent in the first run
    EXPECT_TRUE(configDiff({a.dump(), a.dump()}).empty());
}

}  // namespace
}  // namespace trainbench::profiler
