#include "app/loadtest/loadtest.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "app/loadtest/arrivals.h"
#include "app/loadtest/summarise.h"
#include "engine/util/rng.h"

namespace trainbench::app::loadtest {

namespace {

constexpr uint64_t kScheduleSeed = 0x5C4ED;  // the arrivals' stream, apart from the sample order's

int64_t queryCount(const LoadTestOptions& o, double qps) {
    const double forDuration = std::ceil(qps * std::chrono::duration<double>(o.minDuration).count());
    return std::clamp<int64_t>(std::max<int64_t>(o.minQueryCount, static_cast<int64_t>(forDuration)), 1, o.maxQueryCount);
}

DriverPlan basePlan(const LoadTestOptions& o) {
    DriverPlan plan;
    plan.minQueries = o.minQueryCount;
    plan.maxQueries = o.maxQueryCount;
    plan.minDuration = o.minDuration;
    plan.maxDuration = o.maxDuration;
    return plan;
}

SummaryContext contextFor(const LoadTestOptions& o, Scenario s) {
    SummaryContext c;
    c.scenario = s;
    c.instancesPerQuery = o.instancesPerQuery;
    c.boundPercentile = s == Scenario::Server ? o.latencyPercentile : 90.0;
    c.maxIssueLagUs = static_cast<double>(o.maxIssueLag.count());
    return c;
}

ScenarioResult closedLoop(const LoadTestOptions& o, const RequestSet& requests, Scenario s, int streams) {
    DriverPlan plan = basePlan(o);
    plan.streams = streams;
    plan.maxConnections = streams;
    plan.warmConnections = streams;
    SummaryContext c = contextFor(o, s);
    c.concurrency = streams;
    return summarise(measure(o.target, requests, plan, o.client), c);
}

ScenarioResult offline(const LoadTestOptions& o, const RequestSet& requests) {
    DriverPlan plan = basePlan(o);
    // LoadGen sizes Offline at 1.1 x the expected rate x the minimum duration.
    const int64_t n = std::max(o.minQueryCount, queryCount(o, o.offlineExpectedQps * 1.1));
    plan.arrivals.assign(static_cast<size_t>(std::min(n, o.maxQueryCount)), 0);
    plan.maxConnections = o.maxConnections;
    plan.warmConnections = o.maxConnections;
    SummaryContext c = contextFor(o, Scenario::Offline);
    c.concurrency = o.maxConnections;
    return summarise(measure(o.target, requests, plan, o.client), c);
}

// Caps before anything is allocated or opened: the requests built, the connections and threads.
constexpr int kMaxInstancesPerQuery = 65'536;  // TF Serving's largest batch is far below; so is serve's
constexpr int64_t kMaxSamples = 65'536;
constexpr int kMaxConnections = 4'096;          // also the sweep's highest level: one connection per stream
constexpr int kMaxClientThreads = 256;

void validate(const LoadTestOptions& o) {
    if (o.examples.count <= 0) throw LoadTestError("no examples to send: give an IDX file of images");
    if (o.instancesPerQuery < 1 || o.instancesPerQuery > kMaxInstancesPerQuery)
        throw LoadTestError("instances per query must be in 1.." + std::to_string(kMaxInstancesPerQuery));
    if (o.samples < 1 || o.samples > kMaxSamples)
        throw LoadTestError("samples must be in 1.." + std::to_string(kMaxSamples));
    if (o.maxConnections < 1 || o.maxConnections > kMaxConnections)
        throw LoadTestError("max connections must be in 1.." + std::to_string(kMaxConnections));
    if (o.client.threads < 1 || o.client.threads > kMaxClientThreads)
        throw LoadTestError("client threads must be in 1.." + std::to_string(kMaxClientThreads));
    if (o.minQueryCount < 1 || o.maxQueryCount < o.minQueryCount)
        throw LoadTestError("the query counts must satisfy 1 <= min <= max");
    if (o.maxDuration <= o.minDuration) throw LoadTestError("the maximum duration must exceed the minimum duration");
    if ((o.scenario == Scenario::Server || o.findMaxQps) && !(o.targetQps > 0))
        throw LoadTestError("the Server scenario needs a target QPS above 0");
    if (o.latencyPercentile <= 0 || o.latencyPercentile > 100) throw LoadTestError("the latency percentile must be in (0, 100]");
    if (o.scenario == Scenario::ConcurrencySweep &&
        (o.concurrency.empty() || *std::min_element(o.concurrency.begin(), o.concurrency.end()) < 1 ||
         *std::max_element(o.concurrency.begin(), o.concurrency.end()) > kMaxConnections))
        throw LoadTestError("the concurrency sweep needs levels in 1.." + std::to_string(kMaxConnections));
}

}  // namespace

ScenarioResult runServerScenario(const LoadTestOptions& o, const RequestSet& requests, double qps) {
    DriverPlan plan = basePlan(o);
    const int64_t n = queryCount(o, qps);
    plan.arrivals = poissonArrivals(qps, n, engine::deriveSeed(o.seed, kScheduleSeed, 0));
    plan.maxConnections = o.maxConnections;
    // Enough open connections for the outstanding queries of a server answering within a few ms.
    plan.warmConnections = std::clamp(static_cast<int>(qps / 200.0), 1, std::min(o.maxConnections, 32));
    SummaryContext c = contextFor(o, Scenario::Server);
    c.targetQps = qps;
    c.scheduleWindowNs = scheduleWindowNs(qps, n);
    c.latencyBoundUs = static_cast<double>(o.latencyBound.count());
    return summarise(measure(o.target, requests, plan, o.client), c);
}

LoadTestResult runLoadTest(const LoadTestOptions& options) {
    validate(options);
    LoadTestResult result;
    result.options = options;
    result.options.examples.values.clear();
    result.options.onRun = nullptr;
    const RequestSet requests(options.examples, options.target, options.instancesPerQuery, options.samples, options.seed);
    const auto ran = [&options](ScenarioResult r) {
        if (options.onRun) options.onRun(r);
        return r;
    };
    if (options.findMaxQps) {
        result.search = findMaxQps(options.targetQps, options.searchPrecision, options.maxProbes,
                                   [&](double qps) { return ran(runServerScenario(options, requests, qps)); });
        for (const QpsProbe& p : result.search->probes) result.runs.push_back(p.result);
        return result;
    }
    switch (options.scenario) {
        case Scenario::SingleStream:
            result.runs.push_back(ran(closedLoop(options, requests, Scenario::SingleStream, 1)));
            break;
        case Scenario::Server:
            result.runs.push_back(ran(runServerScenario(options, requests, options.targetQps)));
            break;
        case Scenario::Offline:
            result.runs.push_back(ran(offline(options, requests)));
            break;
        case Scenario::ConcurrencySweep:
            for (int level : options.concurrency)
                result.runs.push_back(ran(closedLoop(options, requests, Scenario::ConcurrencySweep, level)));
            break;
    }
    return result;
}

}  // namespace trainbench::app::loadtest
