#include "app/loadtest/perfcsv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainbench::app::loadtest {

namespace {

std::string us(double microseconds) { return std::to_string(std::llround(microseconds)); }

std::string number(double v) {  // as a C++ stream prints a double by default (6 significant digits)
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

std::string perfAnalyzerCsv(const LoadTestResult& result) {
    const bool rate = result.search.has_value() || result.options.scenario == Scenario::Server;
    std::string csv = std::string(rate ? "Request Rate," : "Concurrency,") + kPerfCsvColumns + "\n";
    std::vector<const ScenarioResult*> rows;
    for (const ScenarioResult& r : result.runs) rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(), [](const ScenarioResult* a, const ScenarioResult* b) {
        return a->inferencesPerSecond < b->inferencesPerSecond;
    });
    for (const ScenarioResult* r : rows) {
        const LatencyBreakdown& b = r->breakdown;
        // perf_analyzer's Server Queue is the time before compute starts, batch formation included.
        const std::string fields[] = {
            rate ? number(r->targetQps) : std::to_string(r->concurrency),
            number(r->inferencesPerSecond),
            us(b.clientSend),
            us(b.network),
            us(b.serverQueue + b.serverBatch),
            us(b.serverDecode),
            us(b.serverCompute),
            us(b.serverEncode),
            us(b.clientRecv),
            us(r->latency.p50),
            us(r->latency.p90),
            us(r->latency.p95),
            us(r->latency.p99),
        };
        for (size_t i = 0; i < std::size(fields); ++i) csv += (i ? "," : "") + fields[i];
        csv += '\n';
    }
    return csv;
}

}  // namespace trainbench::app::loadtest
