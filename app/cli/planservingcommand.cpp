// trainbench-cli plan-serving: the cheapest serving configurations that answer a QPS within a p99
// bound on the catalog's devices, and the cost of precomputing a fraction in batch (docs/cli.md).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/texttable.h"
#include "app/experiment/experimenterror.h"
#include "app/plan/servingplan.h"
#include "app/plan/servingtargets.h"
#include "app/run/exitcodes.h"
#include "engine/emulation/devicecatalog.h"
#include "profiler/format/numberformat.h"
#include "profiler/plan/quantities.h"

namespace trainbench::cli {

namespace {

std::string configText(const app::ServingPoint& p) {
    return std::to_string(p.config.instances) + " x, batch " + std::to_string(p.config.max_batch_size) + ", " +
           std::to_string(p.config.batch_timeout_us) + " us";
}

// The cheapest way to predict in batch: any target at its most economical batch of the grid.
double batchUsdPerMillion(const app::ServingPlanRequest& r) {
    double best = std::numeric_limits<double>::infinity();
    for (const app::ServingTarget& t : r.targets) {
        if (!t.why_not.empty()) continue;
        for (int64_t b : r.grid.batches)
            best = std::min(best, t.price_per_hour / 3600.0 * t.batchSeconds(b) / static_cast<double>(b) * 1e6);
    }
    return best;
}

// The cheapest online configuration at `qps`, or infinity.
double onlineUsdPerMillion(app::ServingPlanRequest r, double qps) {
    if (qps <= 0) return 0.0;
    r.qps = qps;
    r.exhaustive = false;
    const app::ServingPlan plan = app::planServing(r);
    return plan.ranked.empty() ? std::numeric_limits<double>::infinity() : plan.ranked.front().usd_per_million;
}

std::string money(double usd) {
    return std::isfinite(usd) ? fmt("$%.4f", usd) : std::string("cannot meet the bound");
}

}  // namespace

int planServingCommand(const PlanServingArgs& args) {
    app::ServingPlanRequest r;
    std::vector<engine::Precision> precisions;
    try {
        r.qps = args.qps;
        r.p99_seconds = profiler::parseDuration(args.p99, "--p99");
        for (const std::string& name : args.precisions) precisions.push_back(engine::parseInferencePrecision(name));
        if (args.precompute_fraction < 0 || args.precompute_fraction > 1)
            throw std::invalid_argument("--precompute-fraction must be within 0..1");
        if (!(r.qps > 0)) throw std::invalid_argument("--qps must be positive");
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "plan-serving: %s\n", e.what());
        return kExitUsage;
    }
    app::Experiment x;
    try {
        x = app::loadExperimentFile(args.file, args.overrides);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    try {
        r.targets = app::emulatedServingTargets(x, engine::DeviceCatalog::builtin(), precisions);
        r.exhaustive = args.exhaustive;
        r.queries = args.queries;
        const app::ServingPlan plan = app::planServing(r);
        const double batchCost = batchUsdPerMillion(r);
        std::vector<double> fractions = {0.0, 0.2, 0.5, 0.8, 1.0};
        if (std::find(fractions.begin(), fractions.end(), args.precompute_fraction) == fractions.end())
            fractions.push_back(args.precompute_fraction);
        std::sort(fractions.begin(), fractions.end());
        nlohmann::json split = nlohmann::json::array();
        for (double f : fractions) {
            const double online = onlineUsdPerMillion(r, r.qps * (1 - f));
            split.push_back({{"precomputed_fraction", f},
                             {"online_qps", r.qps * (1 - f)},
                             {"online_usd_per_million", std::isfinite(online) ? nlohmann::json(online) : nlohmann::json()},
                             {"usd_per_million", std::isfinite(online) ? nlohmann::json(app::splitCostPerMillion(f, batchCost, online))
                                                                       : nlohmann::json()}});
        }
        if (args.json) {
            nlohmann::json out = {{"qps", r.qps}, {"p99_seconds", r.p99_seconds}, {"exhaustive", r.exhaustive},
                                  {"points_tried", plan.points_tried}, {"grid_points", plan.grid_points},
                                  {"batch_usd_per_million", batchCost}, {"split", split}};
            nlohmann::json ranked = nlohmann::json::array();
            for (const app::ServingPoint& p : plan.ranked) {
                const app::ServingTarget& t = r.targets[p.config.target];
                ranked.push_back({{"device", t.device}, {"precision", engine::precisionName(t.precision)},
                                  {"instances", p.config.instances}, {"max_batch_size", p.config.max_batch_size},
                                  {"batch_timeout_micros", p.config.batch_timeout_us}, {"p50_seconds", p.sim.p50},
                                  {"p99_seconds", p.sim.p99}, {"mean_batch", p.sim.mean_batch},
                                  {"utilisation", p.sim.utilisation}, {"usd_per_million", p.usd_per_million}});
            }
            out["ranked"] = ranked;
            std::printf("%s\n", out.dump(2).c_str());
            return kExitOk;
        }
        std::printf("serving %s at %.0f queries/s within p99 %s: %s search, %lld of %lld configurations simulated\n\n",
                    x.name.c_str(), r.qps, profiler::formatDuration(r.p99_seconds).c_str(),
                    r.exhaustive ? "exhaustive" : "quick", static_cast<long long>(plan.points_tried),
                    static_cast<long long>(plan.grid_points));
        if (plan.ranked.empty()) {
            std::printf("no configuration meets the bound (the fastest single query on any device takes longer, or "
                        "no device carries the load with %lld instances)\n",
                        static_cast<long long>(r.grid.instances.back()));
        } else {
            TextTable table({"#", "device", "precision", "instances, max batch, timeout", "p50", "p99", "mean batch",
                             "busy", "$/1M predictions"});
            for (size_t i = 0; i < plan.ranked.size() && i < static_cast<size_t>(args.top); ++i) {
                const app::ServingPoint& p = plan.ranked[i];
                const app::ServingTarget& t = r.targets[p.config.target];
                table.add({std::to_string(i + 1), t.label, engine::precisionName(t.precision), configText(p),
                           profiler::formatDuration(p.sim.p50), profiler::formatDuration(p.sim.p99),
                           fmt("%.1f", p.sim.mean_batch), fmt("%.0f %%", 100 * p.sim.utilisation),
                           fmt("$%.4f", p.usd_per_million)});
            }
            table.print(stdout);
        }
        std::printf("\nprecomputing a fraction in batch (%s per million at the cheapest batch) and serving the rest:\n",
                    money(batchCost).c_str());
        TextTable splitTable({"precomputed", "online queries/s", "online $/1M", "$/1M overall"});
        for (const nlohmann::json& s : split)
            splitTable.add({fmt("%.0f %%", 100 * s["precomputed_fraction"].get<double>()),
                            fmt("%.0f", s["online_qps"].get<double>()),
                            s["online_usd_per_million"].is_null() ? money(INFINITY)
                                                                  : money(s["online_usd_per_million"].get<double>()),
                            s["usd_per_million"].is_null() ? money(INFINITY) : money(s["usd_per_million"].get<double>())});
        splitTable.print(stdout);
        std::printf("\nlatency: the dynamic batcher replayed on a virtual clock (Poisson arrivals, TF Serving's batching "
                    "policy) with each device's estimated latency per batch and %s per query outside the model; "
                    "cost: the instances' catalog price per hour over the queries they answer. Estimates, not "
                    "measurements: loadtest measures this host.\n",
                    profiler::formatDuration(r.request_overhead_seconds).c_str());
        for (const engine::DeviceSpec& d : engine::DeviceCatalog::builtin().devices())
            if (d.needs_calibration)
                std::printf("%s: not planned (its figures come from a calibration of this host; measure it with "
                            "trainbench-cli loadtest)\n", d.id.c_str());
        for (const app::ServingTarget& t : r.targets)
            if (!t.why_not.empty())
                std::printf("%s %s: %s\n", t.label.c_str(), engine::precisionName(t.precision), t.why_not.c_str());
        return kExitOk;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plan-serving: %s\n", e.what());
        return kExitUsage;
    }
}

}  // namespace trainbench::cli
