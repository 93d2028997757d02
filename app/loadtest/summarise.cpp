#include "app/loadtest/summarise.h"

#include <algorithm>
#include <cmath>

#include "profiler/format/numberformat.h"

namespace trainbench::app::loadtest {

namespace {

constexpr double kUs = 1e-3;  // nanoseconds to microseconds

// The client counts as saturated when its threads were busy this share of the run.
constexpr double kBusyShare = 0.9;
// Server: the achieved QPS must reach this share of the target for a run the client kept up with.
constexpr double kRateShare = 0.99;

double nearestRank(std::vector<int64_t>& v, double p) {
    if (v.empty()) return 0;
    const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size()))));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(rank - 1), v.end());
    return static_cast<double>(v[rank - 1]) * kUs;
}

LatencyBreakdown breakdownOf(const std::vector<QueryRecord>& records) {
    LatencyBreakdown b;
    int64_t ok = 0, batches = 0;
    for (const QueryRecord& r : records) {
        if (!r.ok) continue;
        ++ok;
        b.clientSend += static_cast<double>(r.written - r.scheduled);
        b.clientRecv += static_cast<double>(r.done - r.received);
        double wire = static_cast<double>(r.received - r.written);
        if (r.server.present) {
            ++b.withServerTiming;
            b.serverQueue += static_cast<double>(r.server.queueUs) * 1e3;
            b.serverBatch += static_cast<double>(r.server.batchUs) * 1e3;
            b.serverDecode += static_cast<double>(r.server.decodeUs) * 1e3;
            b.serverCompute += static_cast<double>(r.server.computeUs) * 1e3;
            b.serverEncode += static_cast<double>(r.server.encodeUs) * 1e3;
            batches += r.server.batch;
            wire -= static_cast<double>(r.server.totalUs()) * 1e3;
        }
        b.network += wire;
    }
    if (b.withServerTiming) b.meanBatch = static_cast<double>(batches) / static_cast<double>(b.withServerTiming);
    if (!ok) return b;
    for (double* part : {&b.clientSend, &b.network, &b.serverQueue, &b.serverBatch, &b.serverDecode, &b.serverCompute,
                         &b.serverEncode, &b.clientRecv})
        *part = *part / static_cast<double>(ok) * kUs;
    return b;
}

std::vector<SecondPoint> perSecondOf(const std::vector<QueryRecord>& records) {
    std::vector<std::vector<int64_t>> seconds;
    for (const QueryRecord& r : records) {
        if (!r.ok) continue;
        const size_t s = static_cast<size_t>(std::max<int64_t>(0, r.done) / 1'000'000'000);
        if (seconds.size() <= s) seconds.resize(s + 1);
        seconds[s].push_back(r.latency());
    }
    std::vector<SecondPoint> points;
    for (size_t s = 0; s < seconds.size(); ++s) {
        SecondPoint p;
        p.second = static_cast<int64_t>(s);
        p.completed = static_cast<int64_t>(seconds[s].size());
        p.p50 = nearestRank(seconds[s], 50);
        p.p99 = nearestRank(seconds[s], 99);
        points.push_back(p);
    }
    return points;
}

ClientCheck clientCheckOf(const Measurement& m, const SummaryContext& c, double achievedQps) {
    ClientCheck check;
    check.threads = m.threads;
    check.cpuSeconds = m.cpuSeconds;
    const double wall = static_cast<double>(m.wallNs) * 1e-9;
    check.cpuShare = wall > 0 ? m.cpuSeconds / (wall * m.threads) : 0.0;
    LatencyHistogram issue, wait, send;
    for (const QueryRecord& r : m.records) {
        issue.record(r.issueLag());
        wait.record(r.connectionWait());
        send.record(r.sendLag());
    }
    check.issueLag = summariseLatency(issue);
    check.connectionWait = summariseLatency(wait);
    check.sendLag = summariseLatency(send);
    if (c.scenario == Scenario::Server) {
        // The issue lag is the client's alone: a slow server makes queries wait for a connection
        // (connectionWait), never for the client's thread to get round to them.
        if (check.issueLag.p99 > c.maxIssueLagUs) {
            check.clientBound = true;
            check.reason = "the client issued queries late: issue lag p99 " + profiler::fmtFixed(check.issueLag.p99, 0) +
                           " us > " + profiler::fmtFixed(c.maxIssueLagUs, 0) + " us";
        } else if (achievedQps < kRateShare * c.targetQps && check.cpuShare >= kBusyShare) {
            check.clientBound = true;
            check.reason = "achieved " + profiler::fmtFixed(achievedQps, 1) +
                           " QPS < 99 % of the target while the client threads were busy " +
                           profiler::fmtPercent(check.cpuShare, 0);
        }
    } else if (check.cpuShare >= kBusyShare) {
        // Closed loop and Offline: a client that is always busy is what limited the outstanding queries.
        check.clientBound = true;
        check.reason = "the client threads were busy " + profiler::fmtPercent(check.cpuShare, 0) + " of the run (>= " +
                       profiler::fmtPercent(kBusyShare, 0) + ")";
    }
    return check;
}

}  // namespace

LatencySummary summariseLatency(const LatencyHistogram& h) {
    LatencySummary s;
    s.count = h.count();
    s.mean = h.mean() * kUs;
    s.p50 = static_cast<double>(h.percentile(50)) * kUs;
    s.p90 = static_cast<double>(h.percentile(90)) * kUs;
    s.p95 = static_cast<double>(h.percentile(95)) * kUs;
    s.p99 = static_cast<double>(h.percentile(99)) * kUs;
    s.p999 = static_cast<double>(h.percentile(99.9)) * kUs;
    s.max = static_cast<double>(h.max()) * kUs;
    return s;
}

ScenarioResult summarise(const Measurement& m, const SummaryContext& c) {
    ScenarioResult r;
    r.scenario = c.scenario;
    r.targetQps = c.targetQps;
    r.concurrency = c.concurrency;
    r.connections = m.connectionsOpened;
    r.issued = m.issued;
    r.completed = m.latency.count();
    r.failed = static_cast<int64_t>(m.records.size()) - r.completed;
    r.abandoned = m.abandoned;
    r.errors = m.errors;
    r.firstError = m.firstError;
    r.malformedTiming = m.malformedTiming;
    // Open loop: the run lasts the whole schedule even if the answers came early, so a run that
    // keeps up achieves exactly the target; answers that come late stretch it and lower the rate.
    const int64_t span = std::max(m.wallNs, c.scheduleWindowNs);
    r.durationSeconds = static_cast<double>(span) * 1e-9;
    r.achievedQps = span > 0 ? static_cast<double>(r.completed) / r.durationSeconds : 0.0;
    r.inferencesPerSecond = r.achievedQps * c.instancesPerQuery;
    r.latency = summariseLatency(m.latency);
    r.service = summariseLatency(m.service);
    r.boundPercentile = c.boundPercentile;
    r.boundLatency = static_cast<double>(m.latency.percentile(c.boundPercentile)) * kUs;
    r.latencyBoundUs = c.latencyBoundUs;
    r.boundMet = r.failed == 0 && r.abandoned == 0 && r.completed > 0 &&
                 (c.latencyBoundUs <= 0 || r.boundLatency <= c.latencyBoundUs);
    r.breakdown = breakdownOf(m.records);
    r.perSecond = perSecondOf(m.records);
    r.client = clientCheckOf(m, c, r.achievedQps);
    return r;
}

}  // namespace trainbench::app::loadtest
