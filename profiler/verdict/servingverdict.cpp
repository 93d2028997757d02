#include "profiler/verdict/servingverdict.h"

#include <algorithm>
#include <cstdio>

namespace trainbench::profiler {

const char* servingBoundName(ServingBound bound) {
    switch (bound) {
        case ServingBound::Client: return "client-bound";
        case ServingBound::Queue: return "queue-bound";
        case ServingBound::UnderBatched: return "under-batched";
        case ServingBound::Serialisation: return "serialisation-bound";
        case ServingBound::Memory: return "memory-bound";
        case ServingBound::Compute: return "compute-bound";
        case ServingBound::Balanced: return "balanced";
    }
    return "balanced";
}

namespace {

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
    char text[256];
    std::snprintf(text, sizeof text, format, a, b, c);
    return text;
}

std::string str(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }

// The point judged: the most queries per second answered without an error, else the last.
int64_t judgedPoint(const std::vector<LoadTestPoint>& points) {
    int64_t best = -1;
    for (size_t i = 0; i < points.size(); ++i) {
        const LoadTestPoint& p = points[i];
        if (p.errors > 0 || p.queries == 0) continue;
        if (best < 0 || p.achieved_qps > points[static_cast<size_t>(best)].achieved_qps) best = static_cast<int64_t>(i);
    }
    if (best < 0 && !points.empty()) best = static_cast<int64_t>(points.size()) - 1;
    return best;
}

struct Shares {
    double wait = 0, compute = 0, serialise = 0, rest = 0, total = 0;  // ms
    double share(double part) const { return total > 0 ? part / total : 0; }
};

Severity severityOf(double share) { return share >= 0.6 ? Severity::High : Severity::Moderate; }

int64_t instancesOf(const ServedSettings& s) {
    return s.instances.value_or(s.num_batch_threads.value_or(s.host_cores));
}

// Do queries mostly run alone? Without batching, always; otherwise when no more are outstanding than
// there are instances to take them one by one.
bool smallBatches(const LoadTestPoint& p, const ServedSettings& s, const Shares& t) {
    if (s.enable_batching && !*s.enable_batching) return true;
    if (s.max_batch_size && *s.max_batch_size <= 2) return true;
    const double instances = static_cast<double>(std::max<int64_t>(1, instancesOf(s)));
    if (p.concurrency) return static_cast<double>(*p.concurrency) <= instances;
    // Open loop: queries in the server at once, by Little's law.
    return p.achieved_qps * t.total / 1000.0 <= instances;
}

ServingAction moreInstances(const ServedSettings& s) {
    const std::string cores = std::to_string(s.host_cores);
    return {"One model instance per core",
            {{"--num-batch-threads", str(s.num_batch_threads), cores}, {"--instances", str(s.instances), cores}},
            "up to " + cores + " batches run at once instead of " + std::to_string(instancesOf(s)),
            "TF Serving's CPU advice: num_batch_threads = cores, each with an instance"};
}

ServingAction toInt8(const ServedSettings& s) {
    return {"Serve the model in int8",
            {{"--precision", s.precision.value_or(""), "int8"}},
            "4x fewer weight bytes per batch; int8 dot products run faster where the CPU has VNNI",
            "post-training static quantization, calibrated on training batches; accuracy is measured "
            "(`trainbench-cli quantize`)"};
}

}  // namespace

ServingVerdict classifyServing(const std::vector<LoadTestPoint>& points, const ServedSettings& s) {
    ServingVerdict v;
    v.point = judgedPoint(points);
    const bool ownServer = s.precision.has_value();
    for (const LoadTestPoint& p : points)
        if (p.client_bound) {
            v.bound = ServingBound::Client;
            v.severity = Severity::High;
            v.point = p.point;
            v.summary = "The load generator could not keep up at point " + std::to_string(p.point) +
                        ": its figures are the client's, not the server's";
            v.evidence.push_back({"client_bound_point", static_cast<double>(p.point), "",
                                  "point " + std::to_string(p.point) + " (" + fmt("%.0f", p.achieved_qps) +
                                      " QPS) found the client to be the bottleneck"});
            v.actions.push_back({"More load generator threads",
                                 {{"--client-threads", std::to_string(s.client_threads),
                                   std::to_string(std::max<int64_t>(2, 2 * s.client_threads))}},
                                 "the client issues and checks queries on time, so the server's figures show",
                                 "a client measuring itself reports its own limit (docs/loadtest.md)"});
            return v;
        }
    if (v.point < 0 || points[static_cast<size_t>(v.point)].queries == 0) {
        v.summary = "No query was answered: nothing to judge";
        return v;
    }
    const LoadTestPoint& p = points[static_cast<size_t>(v.point)];
    if (!p.compute_ms) {
        v.summary = "The server sent no timing of its own (not trainbench's server): only the client's latency is known";
        if (p.p99_ms) v.evidence.push_back({"p99_ms", *p.p99_ms, "ms", fmt("p99 %.3f ms", *p.p99_ms)});
        return v;
    }
    Shares t;
    t.wait = p.queue_ms.value_or(0) + p.batch_ms.value_or(0);
    t.compute = *p.compute_ms;
    t.serialise = p.serialize_ms.value_or(0);
    t.rest = p.network_ms.value_or(0);
    t.total = t.wait + t.compute + t.serialise + t.rest;
    const auto part = [&](const char* name, double ms, const char* what) {
        v.evidence.push_back({name, 100 * t.share(ms), "%", fmt("%.1f %% of a query's mean latency (%.3f ms) ", 100 * t.share(ms), ms) + what});
    };
    part("wait_share", t.wait, "waiting for a batch and a batch thread");
    part("compute_share", t.compute, "in the model");
    part("serialisation_share", t.serialise, "decoding and encoding JSON");
    part("rest_share", t.rest, "in the client, the kernel and on the wire");
    v.evidence.push_back({"achieved_qps", p.achieved_qps, "QPS", fmt("at %.1f queries per second answered (point %.0f)", p.achieved_qps, double(p.point))});

    const double timeoutMs = static_cast<double>(s.batch_timeout_micros.value_or(0)) / 1000.0;
    const int64_t instances = instancesOf(s);
    if (t.share(t.wait) >= kQueueShare) {
        v.bound = ServingBound::Queue;
        v.severity = severityOf(t.share(t.wait));
        if (timeoutMs > 0 && timeoutMs >= 0.5 * t.wait) {
            v.summary = "Queue-bound: the batch timeout holds queries back";
            const int64_t lower = *s.batch_timeout_micros >= 2000 ? *s.batch_timeout_micros / 4 : 0;
            v.actions.push_back({"Shorter batch timeout",
                                 {{"--batch-timeout-micros", str(s.batch_timeout_micros), std::to_string(lower)}},
                                 fmt("up to %.3f ms less waiting per query", timeoutMs - double(lower) / 1000.0),
                                 "a batch that is not full waits up to batch_timeout_micros for company; at this load "
                                 "it does not fill"});
        } else {
            v.summary = "Queue-bound: queries wait for a free batch thread";
        }
        if (ownServer && instances < s.host_cores) v.actions.push_back(moreInstances(s));
        if (ownServer && s.enable_batching && !*s.enable_batching)
            v.actions.push_back({"Batch queries that wait together",
                                 {{"--enable-batching", "false", "true"}, {"--batch-timeout-micros", str(s.batch_timeout_micros), "0"}},
                                 "queries waiting at once run as one batch, at little more than one's cost",
                                 "TF Serving's CPU starting point: batching with timeout 0"});
        if (ownServer && s.precision == "fp32") v.actions.push_back(toInt8(s));
        return v;
    }
    if (t.share(t.serialise) >= kSerialisationShare) {
        v.bound = ServingBound::Serialisation;
        v.severity = severityOf(t.share(t.serialise));
        v.summary = "Serialisation-bound: JSON decode and encode cost more than the model";
        v.actions.push_back({"More request threads for JSON",
                             {{"--request-threads", "", std::to_string(2 * s.host_cores)}},
                             "decoding overlaps more; the cost per query stays (JSON of every number is the price of the REST API)",
                             "a query's numbers are parsed from text; a batch of small models computes faster than its JSON"});
        return v;
    }
    if (t.share(t.compute) >= kComputeShare) {
        const bool small = smallBatches(p, s, t);
        const double weightBytes = 4.0 * static_cast<double>(s.param_count.value_or(0));
        const double cachePerInstance = s.last_level_cache_bytes > 0
                                            ? double(s.last_level_cache_bytes) / double(std::max<int64_t>(1, instances))
                                            : double(1 << 20);
        v.severity = severityOf(t.share(t.compute));
        if (ownServer && small && s.enable_batching && !*s.enable_batching) {
            v.bound = ServingBound::UnderBatched;
            v.summary = "Under-batched: every query runs the model alone, paying its per-call cost each time";
            v.actions.push_back({"Dynamic batching with a 1 ms window",
                                 {{"--enable-batching", "false", "true"},
                                  {"--batch-timeout-micros", str(s.batch_timeout_micros), "1000"},
                                  {"--max-batch-size", str(s.max_batch_size), "64"}},
                                 "several queries per model call: throughput up, the window added to latency at most",
                                 "TF Serving's guide: batch threads = cores, then try a timeout of 1-10 ms"});
        } else if (ownServer && small && s.precision == "fp32" && weightBytes > cachePerInstance) {
            v.bound = ServingBound::Memory;
            v.summary = "Memory-bound: small batches stream the whole model's weights from memory for a few examples";
            v.evidence.push_back({"weight_bytes", weightBytes, "B",
                                  fmt("%.2f MB of fp32 weights against %.2f MB of cache per instance", weightBytes / 1e6,
                                      cachePerInstance / 1e6)});
            v.actions.push_back(toInt8(s));
            if (s.enable_batching.value_or(true) && timeoutMs == 0)
                v.actions.push_back({"Wait 1 ms for company",
                                     {{"--batch-timeout-micros", str(s.batch_timeout_micros), "1000"}},
                                     "more examples per pass over the weights",
                                     "at this load batches hold about one query"});
        } else {
            v.bound = ServingBound::Compute;
            v.summary = "Compute-bound: the model's own arithmetic is most of a query's time";
            if (ownServer && s.precision == "fp32") v.actions.push_back(toInt8(s));
            if (ownServer && instances * s.threads_per_instance.value_or(1) < s.host_cores)
                v.actions.push_back(moreInstances(s));
        }
        return v;
    }
    v.summary = "Balanced: no part of a query's time stands out";
    return v;
}

}  // namespace trainbench::profiler
