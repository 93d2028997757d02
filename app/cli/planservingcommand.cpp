// trainbench-cli plan-serving: the cheapest serving configurations that answer a QPS within a p99
// bound on the catalog's devices, and the cost of precomputing a fraction in batch (docs/cli.md).
#include <algorithm>
#include <thread>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/servecommands.h"
#include "app/cli/stopsignals.h"
#include "app/cli/texttable.h"
#include "app/experiment/experimenterror.h"
#include "app/inference/servedmodel.h"
#include "app/plan/servingplan.h"
#include "app/plan/servingtargets.h"
#include "app/run/exitcodes.h"
#include "engine/emulation/devicecatalog.h"
#include "profiler/format/numberformat.h"
#include "profiler/plan/quantities.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

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

// One configuration of this host, served and measured: a real `loadtest MODEL` in the Server
// scenario at the target QPS, recorded as a run of kind serve.
struct Measured {
    std::string precision, config, run;
    double achieved_qps = 0, p50 = 0, p99 = 0;  // seconds
    int64_t errors = 0;
    bool client_bound = false, meets = false;
    double usd_per_million = 0;
    std::string failure;
};

std::vector<Measured> measureHost(const PlanServingArgs& args, double qps, double p99Seconds,
                                  const std::vector<std::string>& precisions, double hostPricePerHour,
                                  const StopSignals& signals) {
    struct Config {
        const char* label;
        bool batching;
        int64_t maxBatch, timeout, instances;
    };
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    // TF Serving's CPU advice, its neighbours, and no batching at all.
    const std::vector<Config> configs = {
        {"no batching", false, 1000, 0, cores},
        {"batching, timeout 0", true, 64, 0, cores},
        {"batching, timeout 1 ms", true, 64, 1000, cores},
        {"batching, 1 instance, timeout 1 ms", true, 64, 1000, 1},
    };
    std::vector<Measured> out;
    std::map<std::string, app::ServedModelQuality> measuredModels;  // each precision's size and accuracy, once
    for (const std::string& precision : precisions) {
        if (precision != "fp32" && precision != "int8") continue;  // bf16 is not served here
        for (const Config& c : configs) {
            if (signals.requested().load()) return out;
            LoadTestArgs lt;
            lt.target = args.measure;
            lt.db = args.db;
            lt.scenario = "server";
            lt.qps = qps;
            lt.latencyBound = profiler::shortestNumber(p99Seconds * 1000) + "ms";
            lt.minDuration = args.probe;
            lt.minQueries = 200;
            lt.quiet = true;
            lt.measuredModels = &measuredModels;
            lt.serving.precision = precision;
            lt.serving.enableBatching = c.batching;
            lt.serving.maxBatchSize = c.maxBatch;
            lt.serving.batchTimeoutMicros = c.timeout;
            lt.serving.numBatchThreads = c.instances;
            lt.serving.instances = c.instances;
            Measured m;
            m.precision = precision;
            m.config = std::to_string(c.instances) + " x, " + c.label;
            lt.name = "plan-serving-" + precision + "-" + std::to_string(out.size() + 1);
            const int code = loadtestCommand(lt, signals);
            m.run = lt.name;
            try {
                profiler::RunStore store = profiler::RunStore::open(args.db, profiler::OpenMode::ReadOnly);
                const auto row = store.findRun(lt.name);
                const auto points = row ? store.loadTestPoints(row->id) : std::vector<profiler::LoadTestPoint>{};
                if (points.empty()) {
                    m.failure = "the load test recorded nothing (exit " + std::to_string(code) + ")";
                } else {
                    const profiler::LoadTestPoint& p = points.back();
                    m.run = std::to_string(row->id.value);
                    m.achieved_qps = p.achieved_qps;
                    m.p50 = p.p50_ms.value_or(0) / 1000;
                    m.p99 = p.p99_ms.value_or(0) / 1000;
                    m.errors = p.errors;
                    m.client_bound = p.client_bound;
                    m.meets = p.errors == 0 && !p.client_bound && p.p99_ms && m.p99 <= p99Seconds &&
                              p.achieved_qps >= 0.99 * qps;
                }
            } catch (const profiler::StoreError& e) {
                m.failure = e.what();
            }
            // The host answers the QPS whatever the instances: its price over the queries it answers.
            m.usd_per_million = hostPricePerHour / (qps * 3600.0) * 1e6;
            out.push_back(m);
        }
    }
    return out;
}

}  // namespace

int planServingCommand(const PlanServingArgs& args, const StopSignals& signals) {
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
        std::vector<Measured> measured;
        double hostPrice = 0;
        if (!args.measure.empty()) {
            if (const engine::DeviceSpec* host = engine::DeviceCatalog::builtin().find("cpu-host"))
                hostPrice = host->price_per_hour;
            if (!args.json)
                std::printf("measuring this host: %s served by trainbench-cli serve, Server scenario at %.0f QPS, "
                            "each configuration at least %s ...\n", args.measure.c_str(), r.qps, args.probe.c_str());
            std::fflush(stdout);
            measured = measureHost(args, r.qps, r.p99_seconds, args.precisions, hostPrice, signals);
        }
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
            nlohmann::json host = nlohmann::json::array();
            for (const Measured& m : measured)
                host.push_back({{"device", "cpu-host"}, {"precision", m.precision}, {"config", m.config}, {"run", m.run},
                                {"achieved_qps", m.achieved_qps}, {"p50_seconds", m.p50}, {"p99_seconds", m.p99},
                                {"errors", m.errors}, {"client_bound", m.client_bound}, {"meets", m.meets},
                                {"usd_per_million", m.usd_per_million}, {"failure", m.failure}});
            out["measured"] = host;
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
        if (!measured.empty()) {
            std::printf("\nmeasured on this host (cpu-host, %s an hour; each a load test recorded in %s):\n",
                        fmt("$%.4f", hostPrice).c_str(), args.db.c_str());
            TextTable host({"run", "precision", "configuration", "achieved QPS", "p50", "p99", "errors", "meets", "$/1M predictions"});
            for (const Measured& m : measured)
                host.add({m.run, m.precision, m.config, fmt("%.1f", m.achieved_qps), profiler::formatDuration(m.p50),
                          profiler::formatDuration(m.p99), std::to_string(m.errors),
                          !m.failure.empty() ? m.failure : m.client_bound ? "client-bound" : m.meets ? "yes" : "no",
                          m.meets ? fmt("$%.4f", m.usd_per_million) : "-"});
            host.print(stdout);
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
        if (measured.empty())
            for (const engine::DeviceSpec& d : engine::DeviceCatalog::builtin().devices())
                if (d.needs_calibration)
                    std::printf("%s: not planned (its figures come from a calibration of this host; measure it with "
                                "--measure RUN, or trainbench-cli loadtest)\n", d.id.c_str());
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
