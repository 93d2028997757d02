#pragma once
// What one scenario run (or one concurrency level, or one probe of the QPS search) reports: the
// figures MLPerf LoadGen and perf_analyzer print, and whether the client itself was the bottleneck.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/loadtest/loadtestoptions.h"

namespace trainbench::app::loadtest {

struct LatencySummary {  // microseconds
    int64_t count = 0;
    double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};

// Mean microseconds per successful query; the parts add up to the mean latency (perf_analyzer's
// CSV columns are these). Server parts come from X-Trainbench-Timing and are 0 for queries without it.
struct LatencyBreakdown {
    int64_t withServerTiming = 0;  // queries whose response carried the header
    double clientSend = 0;         // due -> request on the wire: issue lag, waiting for a connection, the write
    double network = 0;            // on the wire -> response read, minus the server's own parts
    double serverQueue = 0, serverBatch = 0, serverDecode = 0, serverCompute = 0, serverEncode = 0;
    double clientRecv = 0;         // response read -> checked
    double meanBatch = 0;          // examples per server batch, over the queries with the header
};

struct SecondPoint {  // the queries that finished in one second of the run
    int64_t second = 0;
    int64_t completed = 0;  // = queries per second
    double p50 = 0, p99 = 0;
};

// The client's own load and the rule that says it, not the server, set the figures (docs/loadtest.md).
struct ClientCheck {
    int threads = 1;
    double cpuSeconds = 0;
    double cpuShare = 0;  // cpuSeconds / (wall time x threads)
    LatencySummary issueLag, connectionWait, sendLag;
    bool clientBound = false;
    std::string reason;  // why it is (or "")
};

struct ScenarioResult {
    Scenario scenario = Scenario::SingleStream;
    double targetQps = 0;  // Server
    int concurrency = 0;   // closed loop: streams; Offline: connections
    int connections = 0;   // opened
    int64_t issued = 0, completed = 0, failed = 0, abandoned = 0;
    std::map<std::string, int64_t> errors;
    std::string firstError;
    int64_t malformedTiming = 0;
    double durationSeconds = 0;
    double achievedQps = 0;          // successful queries per second of the run
    double inferencesPerSecond = 0;  // x instances per query
    LatencySummary latency;          // from each query's scheduled time
    LatencySummary service;          // from each query's send: what a coordinated-omission client would report
    double boundPercentile = 0;      // the percentile the scenario is judged at (SingleStream 90, Server 99)
    double boundLatency = 0;         // at that percentile, microseconds
    double latencyBoundUs = 0;       // Server: the bound it must meet (0: none)
    bool boundMet = true;            // Server: boundLatency <= latencyBoundUs, no failures, nothing abandoned
    LatencyBreakdown breakdown;
    std::vector<SecondPoint> perSecond;
    ClientCheck client;
};

}  // namespace trainbench::app::loadtest
