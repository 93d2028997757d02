#include "bench/servedmodelbench.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include "app/inference/graphservable.h"
#include "app/loadtest/loadtest.h"
#include "bench/benchutil.h"
#include "bench/workloads.h"
#include "engine/data/idxreader.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/model/model.h"
#include "engine/serving/servingserver.h"

namespace trainbench::bench {

namespace {

namespace lt = app::loadtest;
constexpr int64_t kImagePixels = 28 * 28;

std::string cpuName() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

// The model call alone: one compiled graph on one thread (as each server instance runs), batch 1.
double inProcessP50Us(const engine::graph::Graph& g, const lt::ExampleSet& x, int queries) {
    std::vector<double> lat;
    std::thread t([&] {
        engine::CpuDevice dev(1);
        dev.bindThreads();
        engine::inference::CompiledGraph c(engine::graph::optimizeForInference(g), dev);
        std::vector<float> logits(10);
        for (int i = 0; i < 50; ++i) c.run(x.values.data() + (i % x.count) * kImagePixels, 1, logits.data());
        for (int q = 0; q < queries; ++q) {
            const auto t0 = Clock::now();
            c.run(x.values.data() + (q % x.count) * kImagePixels, 1, logits.data());
            lat.push_back(secondsSince(t0) * 1e6);
        }
    });
    t.join();
    return median(lat);
}

engine::serving::ServingOptions serverOptions(bool batching, int64_t timeoutMicros, const ServedModelBenchOptions& o) {
    engine::serving::ServingOptions s;
    s.port = 0;
    s.batching.enable_batching = batching;
    s.batching.max_batch_size = batching ? o.maxBatch : 1;
    s.batching.batch_timeout_micros = batching ? timeoutMicros : 0;
    s.batching.num_batch_threads = 0;  // the cores
    s.batching.max_enqueued_batches = batching ? 10 : 1000;  // without batching each request is a batch
    return s;
}

lt::LoadTestOptions clientOptions(const engine::serving::ServingServer& server, const std::string& name,
                                  const lt::ExampleSet& x, const ServedModelBenchOptions& o) {
    lt::LoadTestOptions c;
    c.target.host = "127.0.0.1";
    c.target.port = server.port();
    c.target.model = name;
    c.examples = x;
    c.client.threads = o.clientThreads;
    c.maxConnections = 256;
    return c;
}

}  // namespace

int servedModelBench(const ServedModelBenchOptions& o) {
    const lt::ExampleSet x = testImages(o.data, 1000);
    std::printf("served model vs in-process call, %s, %u cores; server: trainbench's (graphServable, one instance and one "
                "thread per batch thread); client: trainbench's load generator, %d thread(s), loopback\n",
                cpuName().c_str(), std::thread::hardware_concurrency(), o.clientThreads);
    int failures = 0;
    for (const std::string& w : o.workloads) {
        const engine::graph::Graph g = workloadGraph(w);
        app::GraphServableOptions so;
        so.name = w;
        // TF Serving's defaults: batching on, timeout 0 (a lone query is not held back).
        engine::serving::ServingServer server(app::graphServable(g, so), serverOptions(true, 0, o));
        server.start();
        std::vector<double> inProcess, served;
        for (int r = 0; r < o.rounds; ++r) {
            inProcess.push_back(inProcessP50Us(g, x, o.queries));
            lt::LoadTestOptions c = clientOptions(server, w, x, o);
            c.scenario = lt::Scenario::SingleStream;
            c.minQueryCount = o.queries;
            c.minDuration = std::chrono::milliseconds(0);
            const lt::LoadTestResult res = lt::runLoadTest(c);
            if (res.runs.empty() || res.runs[0].failed > 0) {
                std::fprintf(stderr, "%s: the served side failed: %s\n", w.c_str(),
                             res.runs.empty() ? "no run" : res.runs[0].firstError.c_str());
                ++failures;
                break;
            }
            served.push_back(res.runs[0].latency.p50);
        }
        server.stop();
        if (served.empty()) continue;
        const double gap = median(served) - median(inProcess);
        std::printf("  %s batch-1 p50: in-process %.1f us [%.1f-%.1f], served %.1f us [%.1f-%.1f]: +%.1f us (goal <= +150 us) %s\n",
                    w.c_str(), median(inProcess), *std::min_element(inProcess.begin(), inProcess.end()),
                    *std::max_element(inProcess.begin(), inProcess.end()), median(served),
                    *std::min_element(served.begin(), served.end()), *std::max_element(served.begin(), served.end()), gap,
                    gap <= 150 ? "met" : "NOT met");
    }
    if (!o.batching) return failures ? 1 : 0;

    // W2's highest Server QPS within the bound, without and with dynamic batching (LoadGen's search).
    const engine::graph::Graph g = workloadGraph("w2");
    double best[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
        const bool batching = side == 1;
        app::GraphServableOptions so;
        so.name = "w2";
        so.max_batch = o.maxBatch;
        engine::serving::ServingServer server(app::graphServable(g, so), serverOptions(batching, o.timeoutMicros, o));
        server.start();
        lt::LoadTestOptions c = clientOptions(server, "w2", x, o);
        c.scenario = lt::Scenario::Server;
        c.findMaxQps = true;
        c.targetQps = 200;
        c.searchPrecision = 0.05;
        c.latencyBound = std::chrono::microseconds(static_cast<int64_t>(o.p99ms * 1000));
        c.minDuration = std::chrono::milliseconds(static_cast<int64_t>(o.minSeconds * 1000));
        c.minQueryCount = 200;
        c.maxIssueLag = std::chrono::microseconds(5000);
        const lt::LoadTestResult res = lt::runLoadTest(c);
        server.stop();
        best[side] = res.search ? res.search->bestQps : 0;
        std::printf("  w2 server scenario, p99 <= %g ms, %s: highest QPS %.1f (%zu probes; %s)\n", o.p99ms,
                    batching ? server.options().batching.describe().c_str() : "batching off (each request alone)",
                    best[side], res.search ? res.search->probes.size() : size_t{0},
                    res.search ? res.search->note.c_str() : "no search");
        if (res.search)
            for (const lt::QpsProbe& p : res.search->probes)
                std::printf("      probe %8.1f QPS: achieved %8.1f, p99 %8.3f ms, mean batch %5.1f%s%s\n", p.qps,
                            p.result.achievedQps, p.result.latency.p99 / 1000, p.result.breakdown.meanBatch,
                            p.met ? "  met" : "", p.result.client.clientBound ? "  CLIENT-BOUND" : "");
    }
    const double ratio = best[0] > 0 ? best[1] / best[0] : 0;
    std::printf("  w2 dynamic batching: %.2fx the highest QPS without (goal >= 3x) %s\n", ratio, ratio >= 3 ? "met" : "NOT met");
    return failures ? 1 : 0;
}

}  // namespace trainbench::bench
