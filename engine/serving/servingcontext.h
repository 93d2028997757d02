#pragma once
// What every connection of one ServingServer shares: the servable, the resolved options, the
// metrics, the request threads and the batch scheduler. Owned by the server, which stops the
// request threads and the scheduler before its io thread, so a connection's work never outlives it.
#include <atomic>
#include <memory>

#include "engine/serving/batchscheduler.h"
#include "engine/serving/servable.h"
#include "engine/serving/servingmetrics.h"
#include "engine/serving/servingoptions.h"
#include "engine/serving/workpool.h"

namespace trainbench::engine::serving {

struct ServingContext {
    // `options` resolved; the scheduler is made by the owner (it makes the model instances).
    ServingContext(Servable s, const ServingOptions& resolved)
        : servable(std::move(s)), options(resolved), metrics(resolved.batching.max_batch_size),
          requests(resolved.request_threads) {}

    Servable servable;
    ServingOptions options;  // resolved: num_batch_threads, instances, request_threads filled in
    ServingMetrics metrics;
    WorkPool requests;
    std::unique_ptr<BatchScheduler> scheduler;
    std::atomic<int64_t> inflightBodyBytes{0};  // against limits.max_inflight_body_bytes
};

}  // namespace trainbench::engine::serving
