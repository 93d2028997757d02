#pragma once
// A load test as Triton perf_analyzer's `-f` CSV file, so its figures sit next to numbers users
// already have: the same header text, times in whole microseconds, rows sorted by increasing
// Inferences/Second. The first column is "Concurrency" (closed-loop runs and Offline, whose level
// is its connection count) or "Request Rate" (Server runs and QPS-search probes), as perf_analyzer
// names it in its request-rate mode. Column meanings: docs/loadtest.md.
#include <string>

#include "app/loadtest/loadtest.h"

namespace trainbench::app::loadtest {

// The header after the first column.
inline constexpr const char* kPerfCsvColumns =
    "Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
    "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency";

std::string perfAnalyzerCsv(const LoadTestResult& result);

}  // namespace trainbench::app::loadtest
