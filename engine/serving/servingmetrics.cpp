#include "engine/serving/servingmetrics.h"

namespace trainbench::engine::serving {

namespace {
constexpr const char* kPrefix = "trainbench_serving_";

std::string gauge(const std::string& name, const std::string& help, int64_t value, const char* type = "gauge") {
    const std::string full = kPrefix + name;
    return "# HELP " + full + " " + help + "\n# TYPE " + full + " " + type + "\n" + full + " " +
           std::to_string(value) + "\n";
}
}  // namespace

ServingMetrics::ServingMetrics(int64_t maxBatchSize)
    : batchSize_(Histogram::powersOfTwo(static_cast<double>(maxBatchSize))),
      paddedBatchSize_(Histogram::powersOfTwo(static_cast<double>(maxBatchSize))),
      queueSeconds_(Histogram::latencySeconds()), computeSeconds_(Histogram::latencySeconds()),
      latencySeconds_(Histogram::latencySeconds()) {}

void ServingMetrics::countResponse(int status) {
    std::lock_guard lock(mutex_);
    ++responses_[status];
}

void ServingMetrics::countError(const std::string& reason) {
    std::lock_guard lock(mutex_);
    ++errors_[reason];
}

void ServingMetrics::observeBatch(int64_t examples, int64_t padded, int64_t computeMicros) {
    batchSize_.observe(static_cast<double>(examples));
    paddedBatchSize_.observe(static_cast<double>(padded));
    computeSeconds_.observe(static_cast<double>(computeMicros) * 1e-6);
}

void ServingMetrics::observeQueue(int64_t queueMicros) { queueSeconds_.observe(static_cast<double>(queueMicros) * 1e-6); }

void ServingMetrics::observeLatency(int64_t latencyMicros) {
    latencySeconds_.observe(static_cast<double>(latencyMicros) * 1e-6);
}

int64_t ServingMetrics::responses(int status) const {
    std::lock_guard lock(mutex_);
    const auto it = responses_.find(status);
    return it == responses_.end() ? 0 : it->second;
}

int64_t ServingMetrics::errors(const std::string& reason) const {
    std::lock_guard lock(mutex_);
    const auto it = errors_.find(reason);
    return it == errors_.end() ? 0 : it->second;
}

std::string ServingMetrics::prometheusText(int64_t enqueuedBatches, int64_t enqueuedRequests) const {
    std::string out;
    {
        std::lock_guard lock(mutex_);
        out += std::string("# HELP ") + kPrefix + "requests_total HTTP responses sent, by status code\n# TYPE " +
               kPrefix + "requests_total counter\n";
        for (const auto& [code, n] : responses_)
            out += std::string(kPrefix) + "requests_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
        out += std::string("# HELP ") + kPrefix + "errors_total Requests that failed, by reason\n# TYPE " + kPrefix +
               "errors_total counter\n";
        for (const auto& [reason, n] : errors_)
            out += std::string(kPrefix) + "errors_total{reason=\"" + reason + "\"} " + std::to_string(n) + "\n";
    }
    out += gauge("connections_open", "HTTP connections open now", connectionsOpen.load());
    out += gauge("connections_refused_total", "Connections closed at once: over max_connections",
                 connectionsRefused.load(), "counter");
    out += gauge("connections_timed_out_total", "Connections closed at a header, body, write or keep-alive deadline",
                 connectionsTimedOut.load(), "counter");
    out += gauge("queue_batches", "Batches waiting for a batch thread, the open one included", enqueuedBatches);
    out += gauge("queue_requests", "Requests waiting for a batch thread", enqueuedRequests);
    out += batchSize_.exposition(std::string(kPrefix) + "batch_size", "Examples per batch run");
    out += paddedBatchSize_.exposition(std::string(kPrefix) + "batch_padded_size",
                                       "The size each batch ran at (allowed_batch_sizes)");
    out += queueSeconds_.exposition(std::string(kPrefix) + "queue_seconds",
                                    "Per request: enqueued until its batch was taken by a batch thread");
    out += computeSeconds_.exposition(std::string(kPrefix) + "compute_seconds", "Per batch: the model's call");
    out += latencySeconds_.exposition(std::string(kPrefix) + "request_latency_seconds",
                                      "Per request: its header read until its response was handed to the socket");
    return out;
}

}  // namespace trainbench::engine::serving
