// The comparison of 2+ runs: convergence overlays, breakdown by run, scaling, data scaling, and the config diff.

#include "profiler/format/numberformat.h"
#include "profiler/compare/datascaling.h"
#include "profiler/report/configdiff.h"
#include "profiler/report/htmlparts.h"
#include "profiler/report/reportcharts.h"
#include "profiler/report/reportformat.h"
#include "profiler/report/scaling.h"

namespace trainbench::profiler::html {

namespace {

std::string scalingTable(const ReportData& data) {
    const Scaling s = scalingOf(data);
    if (!s.differs) return {};
    std::string h = "<h3>Scaling</h3>\n";
    if (s.baseline) {
        const RunRow& base = data.runs[s.rows[*s.baseline].run].run;
        h += "<p>Steady-state throughput against " + esc(runLabel(base)) +
             " (fewest replicas). Efficiency is the speed-up divided by the replica ratio: 100 % is linear scaling.</p>\n";
    } else {
        h += "<p>No run records both its replicas and a throughput: nothing to compare against.</p>\n";
    }
    std::vector<std::vector<Cell>> rows;
    for (const ScalingRow& r : s.rows) {
        const RunRow& run = data.runs[r.run].run;
        rows.push_back({text(runLabel(run)), text(run.strategy), text(run.devices),
                        number(r.replicas ? std::to_string(*r.replicas) : kNotRecorded),
                        number(run.global_batch ? std::to_string(*run.global_batch) : kNotRecorded),
                        number(r.throughput ? fmtRate(*r.throughput) : kNotRecorded),
                        number(r.speedup ? fmtFixed(*r.speedup, 2) + "\u00D7" : kNotRecorded),
                        number(r.efficiency ? fmtPercent(*r.efficiency, 1) : kNotRecorded)});
    }
    return h + table({"run", "strategy", "devices", "replicas", "global batch", "samples/s", "speed-up", "efficiency"}, rows);
}

// Data scaling: each curve's points and its power law (the chart draws them).
std::string dataScalingTable(const ReportData& data) {
    std::vector<DataScalingRun> runs;
    for (const RunReport& r : data.runs) runs.push_back(dataScalingRun(r.run, r.evals));
    const DataScaling d = dataScalingOf(runs, DataScalingMetric::TestError);
    if (d.curves.empty()) return {};
    std::string h = "<h3>Data scaling</h3>\n<p>Test error (1 \u2212 best test accuracy) against the examples each run "
                    "trained on (<code>data.fraction</code> of the training set), runs that differ only in fraction and "
                    "seed as one curve.</p>\n";
    std::vector<std::vector<Cell>> rows;
    for (const DataScalingCurve& c : d.curves) {
        h += "<p><b>" + esc(c.label) + "</b>: " +
             (c.fit ? esc(describeFit(*c.fit, d.metric)) + "." : std::string("too few sizes for a power law (three are needed).")) +
             "</p>\n";
        for (const DataScalingPoint& p : c.points)
            rows.push_back({text(c.label), number(p.fraction ? shortestNumber(*p.fraction) : kNotRecorded),
                            number(std::to_string(p.examples)), number(std::to_string(p.runs.size())),
                            number(fmtPercent(p.mean, 2)), number(fmtPercent(p.min, 2)), number(fmtPercent(p.max, 2))});
    }
    return h + table({"curve", "data.fraction", "training examples", "runs", "test error (mean)", "lowest", "highest"}, rows);
}

std::string configDiffTable(const ReportData& data) {
    std::vector<std::string> configs;
    std::vector<std::string> head{"key"};
    for (const RunReport& r : data.runs) {
        configs.push_back(r.run.config_json);
        head.push_back(runLabel(r.run));
    }
    const auto diff = configDiff(configs);
    std::string h = "<h3>Experiment differences</h3>\n";
    if (diff.empty()) return h + "<p>The runs' resolved experiments are identical.</p>\n";
    h += "<p>The keys whose values differ between the runs' resolved experiments (" + std::to_string(diff.size()) +
         "); \u201Cabsent\u201D: the run's experiment does not have the key.</p>\n";
    std::vector<std::vector<Cell>> rows;
    for (const ConfigDiffRow& d : diff) {
        std::vector<Cell> row{{"<code>" + esc(d.key) + "</code>"}};
        for (const auto& v : d.values) row.push_back(v ? Cell{"<code>" + esc(*v) + "</code>"} : Cell{"<i>absent</i>"});
        rows.push_back(std::move(row));
    }
    return h + table(head, rows, "grid diff");
}

}  // namespace

std::string comparison(const ReportData& data, const ChartEmbed& embed) {
    if (data.runs.size() < 2) return {};
    // What differs in the experiments first: it is what the charts below are read against.
    return "<h2 id=\"comparison\">Comparison</h2>\n" + configDiffTable(data) + charts(comparisonCharts(data), embed) +
           scalingTable(data) + dataScalingTable(data);
}

}  // namespace trainbench::profiler::html
