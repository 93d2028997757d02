#include "engine/serving/servingsimulation.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace trainbench::engine::serving {

namespace {

struct PendingBatch {
    std::vector<int64_t> queries;  // indices into arrivals
    double opened = 0.0;           // its first query's arrival
    bool closed = false;           // full
    double closedAt = 0.0;         // when it filled: the arrival of its last query
};

double percentile(std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0.0;
    const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
    return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

ServingSimResult simulateServing(const ServingSimulation& sim) {
    if (!sim.batchSeconds) throw std::invalid_argument("serving simulation: no batch latency");
    if (!(sim.qps > 0)) throw std::invalid_argument("serving simulation: qps must be positive");
    if (sim.instances < 1) throw std::invalid_argument("serving simulation: at least one instance");
    BatchingParameters batching = sim.batching;
    batching.num_batch_threads = sim.instances;
    if (const std::string e = batching.validate(); !e.empty()) throw std::invalid_argument("serving simulation: " + e);

    std::mt19937_64 rng(sim.seed);
    std::exponential_distribution<double> gap(sim.qps);
    std::vector<double> arrival(static_cast<size_t>(sim.queries));
    double t = 0.0;
    for (double& a : arrival) a = (t += gap(rng));

    const double timeout = static_cast<double>(batching.batch_timeout_micros) * 1e-6;
    std::vector<double> freeAt(static_cast<size_t>(sim.instances), 0.0);
    std::deque<PendingBatch> queue;
    std::vector<double> latency;
    latency.reserve(arrival.size());
    ServingSimResult r;
    double busy = 0.0, lastDone = 0.0;
    int64_t batches = 0, examples = 0;
    size_t next = 0;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    while (next < arrival.size() || !queue.empty()) {
        // When the oldest batch could start: an instance free, and the batch closed or timed out.
        double dispatch = kNever;
        size_t instance = 0;
        if (!queue.empty()) {
            instance = static_cast<size_t>(std::min_element(freeAt.begin(), freeAt.end()) - freeAt.begin());
            const PendingBatch& front = queue.front();
            const double ready = front.closed ? front.closedAt : front.opened + timeout;
            dispatch = std::max(freeAt[instance], ready);
        }
        const double nextArrival = next < arrival.size() ? arrival[next] : kNever;
        if (nextArrival <= dispatch) {
            // A query arrives: it joins the open batch or opens one, or is refused.
            const double now = nextArrival;
            if (queue.empty() || queue.back().closed) {
                if (static_cast<int64_t>(queue.size()) >= batching.max_enqueued_batches) {
                    ++r.refused;
                    ++next;
                    continue;
                }
                queue.push_back({{}, now, false, 0.0});
            }
            PendingBatch& open = queue.back();
            open.queries.push_back(static_cast<int64_t>(next++));
            if (static_cast<int64_t>(open.queries.size()) >= batching.max_batch_size) {
                open.closed = true;
                open.closedAt = now;
            }
            continue;
        }
        // The oldest batch runs on the first free instance.
        // (Taken open, it is closed for good: a later query opens a new batch.)
        PendingBatch batch = std::move(queue.front());
        queue.pop_front();
        const int64_t n = static_cast<int64_t>(batch.queries.size());
        const double seconds = sim.batchSeconds(batching.paddedSize(n));
        const double done = dispatch + seconds;
        freeAt[instance] = done;
        busy += seconds;
        lastDone = std::max(lastDone, done);
        ++batches;
        examples += n;
        for (int64_t q : batch.queries)
            latency.push_back(done - arrival[static_cast<size_t>(q)] + sim.request_overhead_seconds);
    }
    r.completed = static_cast<int64_t>(latency.size());
    if (r.completed == 0) return r;
    double sum = 0.0;
    for (double l : latency) sum += l;
    r.mean = sum / static_cast<double>(r.completed);
    std::sort(latency.begin(), latency.end());
    r.p50 = percentile(latency, 0.50);
    r.p90 = percentile(latency, 0.90);
    r.p99 = percentile(latency, 0.99);
    const double span = lastDone - arrival.front();
    r.achieved_qps = span > 0 ? static_cast<double>(r.completed) / span : 0.0;
    r.mean_batch = static_cast<double>(examples) / static_cast<double>(batches);
    r.utilisation = span > 0 ? busy / (static_cast<double>(sim.instances) * span) : 0.0;
    return r;
}

}  // namespace trainbench::engine::serving
