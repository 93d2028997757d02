#include "profiler/compare/datascaling.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

namespace trainbench::profiler {

namespace {

// Runs of one experiment but for their seed and fraction (and name): different models, optimizers
// or strategies are never drawn as one curve.
std::string familyOf(const RunRow& r) {
    nlohmann::json c = nlohmann::json::parse(r.config_json, nullptr, false);
    if (c.is_discarded() || !c.is_object()) return "#" + std::to_string(r.id.value);
    c.erase("name");
    c.erase("description");
    c.erase("seed");
    if (c.contains("data") && c["data"].is_object()) c["data"].erase("fraction");
    return c.dump();
}

// "fmnist-data-scaling-fraction0.125-seed2" -> "fmnist-data-scaling": the sweep's own suffixes.
std::string labelOf(const std::string& name) {
    static const std::regex suffix("-(fraction|seed)[-+0-9.e]+(?=-|$)");
    std::string out = std::regex_replace(name, suffix, "");
    return out.empty() ? name : out;
}

}  // namespace

const char* metricName(DataScalingMetric metric) {
    return metric == DataScalingMetric::TestError ? "test error" : "test loss";
}

DataScalingRun dataScalingRun(const RunRow& run, const std::vector<EvalSample>& evals) {
    DataScalingRun d;
    d.id = run.id.value;
    d.name = run.name;
    d.family = familyOf(run);
    d.completed = run.status == RunStatus::Completed;
    if (run.train_examples && *run.train_examples > 0) d.examples = run.train_examples;
    d.fraction = run.data_fraction;
    if (run.best_accuracy) d.error = 1.0 - *run.best_accuracy;
    for (auto e = evals.rbegin(); e != evals.rend(); ++e)
        if (e->split == "test") {
            d.test_loss = e->loss;
            break;
        }
    return d;
}

DataScaling dataScalingOf(const std::vector<DataScalingRun>& runs, DataScalingMetric metric) {
    DataScaling out;
    out.metric = metric;
    std::set<int64_t> sizes;
    for (const DataScalingRun& r : runs)
        if (r.examples) sizes.insert(*r.examples);
    out.differs = sizes.size() > 1;

    // Families in the order of their first run; within each, the runs at each size.
    std::vector<std::string> order;
    std::map<std::string, std::map<int64_t, std::vector<const DataScalingRun*>>> families;
    for (const DataScalingRun& r : runs) {
        const std::optional<double> v = metric == DataScalingMetric::TestError ? r.error : r.test_loss;
        if (!r.completed || !r.examples || !v) continue;
        if (!families.count(r.family)) order.push_back(r.family);
        families[r.family][*r.examples].push_back(&r);
    }
    std::set<std::string> labels;
    for (const std::string& family : order) {
        const auto& bySize = families[family];
        if (bySize.size() < 2) continue;  // one size scales nothing
        DataScalingCurve curve;
        std::vector<FitPoint> fitPoints;
        for (const auto& [examples, members] : bySize) {
            DataScalingPoint p;
            p.examples = examples;
            p.min = p.max = metric == DataScalingMetric::TestError ? *members.front()->error : *members.front()->test_loss;
            double sum = 0;
            for (const DataScalingRun* r : members) {
                const double v = metric == DataScalingMetric::TestError ? *r->error : *r->test_loss;
                sum += v;
                p.min = std::min(p.min, v);
                p.max = std::max(p.max, v);
                p.runs.push_back(r->id);
                if (r->fraction && !p.fraction) p.fraction = r->fraction;
                fitPoints.push_back({static_cast<double>(examples), v});
            }
            p.mean = sum / static_cast<double>(members.size());
            curve.points.push_back(std::move(p));
        }
        curve.fit = fitPowerLaw(fitPoints);
        const DataScalingRun& first = *bySize.begin()->second.front();
        const std::string base = labelOf(first.name);
        curve.label = base;
        for (int n = 2; labels.count(curve.label); ++n) curve.label = base + " (" + std::to_string(n) + ")";
        labels.insert(curve.label);
        out.curves.push_back(std::move(curve));
    }
    return out;
}

std::string describeFit(const PowerLawFit& fit, DataScalingMetric metric) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s \u2248 %.3g \u00D7 examples^%.3f (R\u00B2 %.3f over %d runs): doubling the examples leaves %.1f %% of it",
                  metricName(metric), fit.coefficient, fit.slope, fit.r2, fit.points, 100.0 * fit.perDoubling());
    return buf;
}

}  // namespace trainbench::profiler
