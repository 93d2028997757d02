#pragma once
// One measurement: issues queries to a TensorFlow Serving predict endpoint on a pool of keep-alive
// connections, from `threads` client threads, either open loop (each query at its scheduled time,
// whatever the server's answers are doing: Server, Offline) or closed loop (`streams` queries
// outstanding, each issued when one returns: SingleStream, the concurrency sweep), and records what
// every query saw. The scenarios (loadtest.h) turn this into their reports.
#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/loadtest/latencyhistogram.h"
#include "app/loadtest/queryrecord.h"
#include "app/loadtest/requestset.h"

namespace trainbench::app::loadtest {

// The load test could not run at all (the server is not there, a setting is impossible).
class LoadTestError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct DriverPlan {
    std::vector<int64_t> arrivals;  // open loop: each query's due time, ns from the start; empty: closed loop
    int streams = 1;                // closed loop: queries outstanding at once
    // Closed loop: stops issuing once both minimums are met, or either maximum is (LoadGen's rule).
    int64_t minQueries = 1;
    int64_t maxQueries = 1'000'000;
    std::chrono::nanoseconds minDuration{0};
    std::chrono::nanoseconds maxDuration{std::chrono::seconds(60)};  // any run: queries not done by then are abandoned
    int maxConnections = 1;   // HTTP/1.1 carries one request at a time, so this caps outstanding queries
    int warmConnections = 1;  // opened before the clock starts, so connecting is not in the first latencies
};

struct ClientLimits {
    int threads = 1;  // the client's thread budget: io threads that issue, send, read and check
    std::chrono::milliseconds requestTimeout{10'000};  // per query, connect + write + read
    std::chrono::milliseconds connectTimeout{5'000};   // the warm connections
    size_t maxResponseBytes = 64u << 20;
};

struct Measurement {
    std::vector<QueryRecord> records;  // every query that finished, ok or not, by id
    LatencyHistogram latency;          // ok queries, from their scheduled time (merged over threads)
    LatencyHistogram service;          // ok queries, from the moment they were sent (what coordinated omission would report)
    int64_t issued = 0;
    int64_t abandoned = 0;             // issued but not finished by the run's maximum duration
    int64_t wallNs = 0;                // start to the last query's end (or the abandon time)
    double cpuSeconds = 0.0;           // the client threads' user + system time (getrusage RUSAGE_THREAD)
    int threads = 1;
    int connectionsOpened = 0;
    std::map<std::string, int64_t> errors;  // "HTTP 503", "transport", "bad response": count
    std::string firstError;                 // the first failure's message, naming the query and peer
    int64_t malformedTiming = 0;            // X-Trainbench-Timing headers that did not parse
};

// Throws LoadTestError when the target cannot be resolved or the warm connections cannot be opened.
Measurement measure(const PredictTarget& target, const RequestSet& requests, const DriverPlan& plan,
                    const ClientLimits& limits);

}  // namespace trainbench::app::loadtest
