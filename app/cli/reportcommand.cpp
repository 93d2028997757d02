// `trainbench-cli report RUN... --html OUT | --pdf OUT`: the report the GUI exports, headless; with
// --data-scaling, error against training examples and its power law as text or JSON.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/cli/texttable.h"
#include "profiler/plan/quantities.h"
#include "profiler/compare/datascaling.h"
#include "profiler/report/report.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

namespace {

nlohmann::json toJson(const profiler::DataScaling& d) {
    nlohmann::json curves = nlohmann::json::array();
    for (const profiler::DataScalingCurve& c : d.curves) {
        nlohmann::json points = nlohmann::json::array();
        for (const profiler::DataScalingPoint& p : c.points)
            points.push_back({{"examples", p.examples},
                              {"fraction", p.fraction ? nlohmann::json(*p.fraction) : nlohmann::json()},
                              {"mean", p.mean}, {"min", p.min}, {"max", p.max}, {"runs", p.runs}});
        nlohmann::json fit;
        if (c.fit)
            fit = {{"slope", c.fit->slope}, {"coefficient", c.fit->coefficient}, {"r2", c.fit->r2},
                   {"runs", c.fit->points}, {"per_doubling", c.fit->perDoubling()}};
        curves.push_back({{"label", c.label}, {"points", points}, {"power_law", fit}});
    }
    return {{"metric", profiler::metricName(d.metric)}, {"curves", curves}};
}

void printText(const profiler::DataScaling& d) {
    const bool error = d.metric == profiler::DataScalingMetric::TestError;
    std::printf("%s against training examples: %zu curve(s)\n", profiler::metricName(d.metric), d.curves.size());
    auto value = [&](double v) { return error ? fmt("%.2f %%", 100 * v) : fmt("%.4f", v); };
    for (const profiler::DataScalingCurve& c : d.curves) {
        std::printf("\n%s\n", c.label.c_str());
        TextTable t({"data.fraction", "examples", "runs", std::string(profiler::metricName(d.metric)) + " (mean)", "lowest",
                     "highest"});
        for (const profiler::DataScalingPoint& p : c.points)
            t.add({p.fraction ? profiler::shortestNumber(*p.fraction) : "-", std::to_string(p.examples), std::to_string(p.runs.size()),
                   value(p.mean), value(p.min), value(p.max)});
        t.print(stdout);
        if (c.fit) std::printf("power law: %s\n", profiler::describeFit(*c.fit, d.metric).c_str());
        else std::printf("power law: too few sizes (three are needed)\n");
    }
}

}  // namespace

int reportCommand(const ReportArgs& args) {
    if (args.html.empty() && args.pdf.empty() && !args.dataScaling) {
        std::fprintf(stderr, "report: say what to make: --html FILE, --pdf FILE and/or --data-scaling\n");
        return kExitUsage;
    }
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    profiler::ReportData data;
    try {
        std::vector<profiler::RunId> ids;
        for (const std::string& run : args.runs) {
            auto row = findOrComplain(*store, run, code);
            if (!row) return code;
            ids.push_back(row->id);
        }
        data = profiler::collectReport(*store, ids);
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    } catch (const profiler::ReportError& e) {
        std::fprintf(stderr, "report: %s\n", e.what());
        return kExitNotFound;
    }
    if (args.dataScaling) {
        std::vector<profiler::DataScalingRun> runs;
        for (const profiler::RunReport& r : data.runs) runs.push_back(profiler::dataScalingRun(r.run, r.evals));
        const profiler::DataScaling d = profiler::dataScalingOf(
            runs, args.metric == "loss" ? profiler::DataScalingMetric::TestLoss : profiler::DataScalingMetric::TestError);
        if (args.json) std::printf("%s\n", toJson(d).dump(2).c_str());
        else if (d.curves.empty())
            std::printf("no data-scaling curve: it needs finished, evaluated runs of one experiment at two training-set "
                        "sizes or more (a data.fraction sweep)\n");
        else printText(d);
    }
    try {
        if (!args.html.empty()) {
            profiler::writeHtml(data, args.html);
            std::printf("wrote %s (HTML, %zu run(s))\n", args.html.c_str(), data.runs.size());
        }
        if (!args.pdf.empty()) {
            profiler::writePdf(data, args.pdf);
            std::printf("wrote %s (PDF, %zu run(s))\n", args.pdf.c_str(), data.runs.size());
        }
    } catch (const profiler::ReportError& e) {
        std::fprintf(stderr, "report: %s\n", e.what());
        return kExitIo;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
