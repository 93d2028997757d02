#include "app/loadtest/resultjson.h"

namespace trainbench::app::loadtest {

namespace {

using nlohmann::json;

json latencyJson(const LatencySummary& s) {
    return {{"count", s.count}, {"mean_us", s.mean}, {"p50_us", s.p50}, {"p90_us", s.p90}, {"p95_us", s.p95},
            {"p99_us", s.p99},  {"p99.9_us", s.p999}, {"max_us", s.max}};
}


json runJson(const ScenarioResult& r) {
    const LatencyBreakdown& b = r.breakdown;
    const ClientCheck& c = r.client;
    json perSecond = json::array();
    for (const SecondPoint& p : r.perSecond)
        perSecond.push_back({{"second", p.second}, {"qps", p.completed}, {"p50_us", p.p50}, {"p99_us", p.p99}});
    return {{"scenario", scenarioName(r.scenario)},
            {"target_qps", r.targetQps},
            {"concurrency", r.concurrency},
            {"connections", r.connections},
            {"issued", r.issued},
            {"completed", r.completed},
            {"failed", r.failed},
            {"abandoned", r.abandoned},
            {"errors", r.errors},
            {"first_error", r.firstError},
            {"malformed_timing_headers", r.malformedTiming},
            {"duration_s", r.durationSeconds},
            {"achieved_qps", r.achievedQps},
            {"inferences_per_second", r.inferencesPerSecond},
            {"latency", latencyJson(r.latency)},
            {"service_latency", latencyJson(r.service)},
            {"bound", {{"percentile", r.boundPercentile}, {"latency_us", r.boundLatency},
                       {"limit_us", r.latencyBoundUs}, {"met", r.boundMet}}},
            {"breakdown", {{"queries_with_server_timing", b.withServerTiming}, {"client_send_us", b.clientSend},
                           {"network_us", b.network}, {"server_queue_us", b.serverQueue},
                           {"server_batch_us", b.serverBatch}, {"server_decode_us", b.serverDecode},
                           {"server_compute_us", b.serverCompute}, {"server_encode_us", b.serverEncode},
                           {"client_recv_us", b.clientRecv}, {"mean_batch", b.meanBatch}}},
            {"client", {{"threads", c.threads}, {"cpu_s", c.cpuSeconds}, {"cpu_share", c.cpuShare},
                        {"issue_lag", latencyJson(c.issueLag)}, {"connection_wait", latencyJson(c.connectionWait)},
                        {"send_lag", latencyJson(c.sendLag)}, {"client_bound", c.clientBound},
                        {"reason", c.reason}}},
            {"per_second", perSecond}};
}

}  // namespace

nlohmann::json settingsJson(const LoadTestOptions& o) {
    json concurrency = json::array();
    for (int c : o.concurrency) concurrency.push_back(c);
    return json{{"url", "http://" + o.target.host + ":" + std::to_string(o.target.port)},
            {"model", o.target.model},
            {"scenario", scenarioName(o.scenario)},
            {"examples", o.examples.source},
            {"instances_per_query", o.instancesPerQuery},
            {"samples", o.samples},
            {"target_qps", o.targetQps},
            {"latency_bound_us", o.latencyBound.count()},
            {"latency_percentile", o.latencyPercentile},
            {"offline_expected_qps", o.offlineExpectedQps},
            {"concurrency", concurrency},
            {"min_query_count", o.minQueryCount},
            {"min_duration_ms", o.minDuration.count()},
            {"max_duration_ms", o.maxDuration.count()},
            {"max_query_count", o.maxQueryCount},
            {"client_threads", o.client.threads},
            {"request_timeout_ms", o.client.requestTimeout.count()},
            {"max_connections", o.maxConnections},
            {"max_issue_lag_us", o.maxIssueLag.count()},
            {"seed", o.seed},
            {"find_max_qps", o.findMaxQps},
            {"search_precision", o.searchPrecision},
            {"max_probes", o.maxProbes}};
}

json resultJson(const LoadTestResult& result) {
    json doc = {{"kind", "serve"}, {"settings", settingsJson(result.options)}, {"runs", json::array()}};
    for (const ScenarioResult& r : result.runs) doc["runs"].push_back(runJson(r));
    if (result.search) {
        json probes = json::array();
        for (const QpsProbe& p : result.search->probes)
            probes.push_back({{"qps", p.qps}, {"met", p.met}, {"p_latency_us", p.result.boundLatency},
                              {"achieved_qps", p.result.achievedQps}, {"client_bound", p.result.client.clientBound}});
        doc["search"] = {{"best_qps", result.search->bestQps}, {"client_bound", result.search->clientBound},
                         {"note", result.search->note}, {"probes", probes}};
    }
    return doc;
}

}  // namespace trainbench::app::loadtest
