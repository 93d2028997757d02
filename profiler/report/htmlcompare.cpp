// The comparison of 2+ runs: convergence overlays, breakdown by run, scaling, and the config diff.
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
           scalingTable(data);
}

}  // namespace trainbench::profiler::html
