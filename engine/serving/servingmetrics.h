#pragma once
// What the server counts, exported at GET /metrics in Prometheus' text format (version 0.0.4):
// requests by HTTP status, errors by reason, connections, and histograms of batch size, queue
// time, compute time and request latency (docs/serving.md lists every series). Any thread.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "engine/serving/histogram.h"

namespace trainbench::engine::serving {

class ServingMetrics {
public:
    explicit ServingMetrics(int64_t maxBatchSize);

    void countResponse(int status);
    void countError(const std::string& reason);  // "bad_request", "queue_full", "model", ...
    void observeBatch(int64_t examples, int64_t padded, int64_t computeMicros);
    void observeQueue(int64_t queueMicros);      // a predict request's wait for its batch to be taken
    void observeLatency(int64_t latencyMicros);  // a predict request's header until its answer

    std::atomic<int64_t> connectionsOpen{0};
    std::atomic<int64_t> connectionsRefused{0};  // over max_connections
    std::atomic<int64_t> connectionsTimedOut{0};  // a header, body, write or keep-alive deadline

    int64_t responses(int status) const;
    int64_t errors(const std::string& reason) const;
    const Histogram& batchSizes() const { return batchSize_; }

    // The exposition, with the queue's current depth (read by the caller).
    std::string prometheusText(int64_t enqueuedBatches, int64_t enqueuedRequests) const;

private:
    mutable std::mutex mutex_;
    std::map<int, int64_t> responses_;
    std::map<std::string, int64_t> errors_;
    Histogram batchSize_, paddedBatchSize_, queueSeconds_, computeSeconds_, latencySeconds_;
};

}  // namespace trainbench::engine::serving
