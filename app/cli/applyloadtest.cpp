#include "app/cli/applyloadtest.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/loadtest/servingrunverdict.h"
#include "app/quote/quote.h"
#include "profiler/format/numberformat.h"

namespace trainbench::cli {

namespace {

using nlohmann::json;

template <typename T>
T field(const json& config, const char* key, T fallback) {
    const auto it = config.find(key);
    return it != config.end() && !it->is_null() ? it->get<T>() : fallback;
}

std::string durationMs(double ms) { return profiler::shortestNumber(ms) + "ms"; }

}  // namespace

LoadTestArgs loadtestForAction(const profiler::RunRow& run, const profiler::ServingAction& action, const std::string& db,
                               int number) {
    const json config = json::parse(run.config_json);
    if (!config.contains("target"))
        throw std::invalid_argument("run " + std::to_string(run.id.value) + " did not record what it measured (target)");
    LoadTestArgs a;
    a.db = db;
    a.target = config["target"].get<std::string>();
    a.scenario = field<std::string>(config, "scenario_asked", field<std::string>(config, "scenario", "single-stream"));
    a.qps = field<double>(config, "target_qps", 100);
    a.latencyBound = durationMs(field<double>(config, "latency_bound_us", 10000) / 1000.0);
    a.percentile = field<double>(config, "latency_percentile", 99);
    a.findMaxQps = field<bool>(config, "find_max_qps", false);
    a.searchPrecision = field<double>(config, "search_precision", 0.02);
    a.maxProbes = field<int>(config, "max_probes", 16);
    a.concurrency = field<std::vector<int>>(config, "concurrency", {1, 2, 4, 8});
    a.offlineExpectedQps = field<double>(config, "offline_expected_qps", 0);
    a.instancesPerQuery = field<int>(config, "instances_per_query", 1);
    a.samples = field<int64_t>(config, "samples", 256);
    a.minQueries = field<int64_t>(config, "min_query_count", 100);
    a.minDuration = durationMs(field<double>(config, "min_duration_ms", 2000));
    a.maxDuration = durationMs(field<double>(config, "max_duration_ms", 60000));
    a.clientThreads = field<int>(config, "client_threads", 1);
    a.requestTimeout = durationMs(field<double>(config, "request_timeout_ms", 10000));
    a.maxConnections = field<int>(config, "max_connections", 64);
    a.maxIssueLag = durationMs(field<double>(config, "max_issue_lag_us", 2000) / 1000.0);
    a.seed = field<uint64_t>(config, "seed", 0);
    a.examples = field<std::string>(config, "examples_file", "");
    a.examplesLimit = field<int64_t>(config, "examples_limit", 1000);
    a.exampleShape = field<std::vector<int64_t>>(config, "example_shape", {});
    a.inputScale = field<double>(config, "input_scale", 1.0);
    a.name = run.name + "-action" + std::to_string(number);

    std::vector<std::string> server = field<std::vector<std::string>>(config, "server", {});
    for (const profiler::FlagChange& c : action.changes) {
        if (c.flag == "--client-threads") {
            a.clientThreads = std::stoi(c.to);
            continue;
        }
        if (!config.contains("server"))
            throw std::invalid_argument("run " + std::to_string(run.id.value) + " measured a server it did not start (" +
                                        a.target + "): " + c.flag + " is that server's to change");
        const std::string prefix = c.flag + "=";
        server.erase(std::remove_if(server.begin(), server.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; }),
                     server.end());
        server.push_back(prefix + c.to);
    }
    // The server's flags back through the same parser `serve` uses (CLI11 takes them last first).
    CLI::App parser;
    addServingFlags(&parser, a.serving, /*withListen=*/false);
    std::vector<std::string> reversed(server.rbegin(), server.rend());
    try {
        parser.parse(reversed);
    } catch (const CLI::ParseError& e) {
        throw std::invalid_argument("the recorded server flags do not parse: " + std::string(e.what()));
    }
    return a;
}

std::string loadtestCommandLine(const LoadTestArgs& a) {
    std::string s = "trainbench-cli loadtest " + app::shellWord(a.target, "MODEL");
    if (a.findMaxQps) {
        s += " --find-max-qps --qps " + profiler::shortestNumber(a.qps) + " --p99 " + a.latencyBound;
    } else {
        s += " --scenario " + a.scenario;
        if (a.scenario == "server") s += " --qps " + profiler::shortestNumber(a.qps) + " --p99 " + a.latencyBound;
        if (a.scenario == "concurrency") {
            std::string levels;
            for (int c : a.concurrency) levels += (levels.empty() ? "" : ",") + std::to_string(c);
            s += " --concurrency " + levels;
        }
    }
    s += " --min-queries " + std::to_string(a.minQueries) + " --min-duration " + a.minDuration;
    if (a.clientThreads != 1) s += " --client-threads " + std::to_string(a.clientThreads);
    if (a.instancesPerQuery != 1) s += " --instances-per-query " + std::to_string(a.instancesPerQuery);
    if (!a.examples.empty()) s += " --examples " + app::shellWord(a.examples, "--examples");
    if (a.target.rfind("http", 0) != 0)
        for (const std::string& f : servingArguments(a.serving)) s += " " + app::shellWord(f, "server flag");
    return s + " --name " + app::shellWord(a.name, "--name") + " --db " + app::shellWord(a.db, "--db");
}

void printServingProfile(profiler::RunStore& store, const profiler::RunRow& run, const std::string& db) {
    const std::vector<profiler::LoadTestPoint> points = store.loadTestPoints(run.id);
    std::printf("run %lld  %s (%s), a load test: %zu point(s)\n", static_cast<long long>(run.id.value), run.name.c_str(),
                std::string(profiler::runStatusName(run.status)).c_str(), points.size());
    const auto opt = [](const std::optional<double>& v) { return v ? profiler::fmtFixed(*v, 3) : std::string("-"); };
    std::printf("\n  %-5s %-13s %-10s %9s %9s %9s %9s  %8s %8s %8s %8s %8s %6s\n", "POINT", "SCENARIO", "LOAD", "QPS",
                "P50 MS", "P99 MS", "P99.9 MS", "QUEUE", "BATCH", "COMPUTE", "JSON", "REST", "ERRORS");
    for (const profiler::LoadTestPoint& p : points) {
        const std::string load = p.target_qps ? profiler::shortestNumber(*p.target_qps) + " QPS"
                                 : p.concurrency ? std::to_string(*p.concurrency) + " outst."
                                                 : "all";
        std::printf("  %-5lld %-13s %-10s %9.1f %9s %9s %9s  %8s %8s %8s %8s %8s %6lld%s\n", static_cast<long long>(p.point),
                    p.scenario.c_str(), load.c_str(), p.achieved_qps, opt(p.p50_ms).c_str(), opt(p.p99_ms).c_str(),
                    opt(p.p999_ms).c_str(), opt(p.queue_ms).c_str(), opt(p.batch_ms).c_str(), opt(p.compute_ms).c_str(),
                    opt(p.serialize_ms).c_str(), opt(p.network_ms).c_str(), static_cast<long long>(p.errors),
                    p.client_bound ? "  client-bound" : "");
    }
    const profiler::ServingVerdict v = app::servingVerdictOf(store, run);
    std::printf("\nverdict: %s (%s)", profiler::servingBoundName(v.bound), profiler::severityName(v.severity));
    if (v.point >= 0) std::printf(", at point %lld", static_cast<long long>(v.point));
    std::printf("\n  %s\n", v.summary.c_str());
    for (const profiler::Evidence& e : v.evidence) std::printf("  - %s\n", e.text.c_str());
    if (v.actions.empty()) return;
    std::printf("\nactions (trainbench-cli apply %lld --action N --run --db %s)\n", static_cast<long long>(run.id.value),
                app::shellWord(db, "--db").c_str());
    for (size_t i = 0; i < v.actions.size(); ++i) {
        const profiler::ServingAction& a = v.actions[i];
        std::printf("  %zu. %s\n", i + 1, a.title.c_str());
        for (const profiler::FlagChange& c : a.changes)
            std::printf("     %s: %s -> %s\n", c.flag.c_str(), c.from.empty() ? "(default)" : c.from.c_str(), c.to.c_str());
        if (!a.expected.empty()) std::printf("     expected: %s\n", a.expected.c_str());
        if (!a.rationale.empty()) std::printf("     why: %s\n", a.rationale.c_str());
    }
}

}  // namespace trainbench::cli
