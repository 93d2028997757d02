// `trainbench-bench classify`: the classifier on a stored run of 10,000 steps, the way
// `trainbench-cli profile RUN --reclassify` runs it (open the store, read the run back, classify,
// save the verdict). The run is recorded for real with RunWriter, as a training process would.
#include "bench/classifybench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "engine/layers/opcosts.h"
#include "profiler/machine/machinecache.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::bench {

namespace runattr = profiler::runattr;

namespace {

using namespace trainbench::engine;
namespace opcost = engine::opcost;

constexpr int64_t kBatch = 128;

// An MLP's op rows for `steps` steps (one call of each per step): W1's shapes with one more hidden
// layer, so that there are 20 rows (inner products, ReLU backward passes, Adam updates, weight
// reorders), each timed at about the rate W1 reaches on this machine at 2 threads. Adds one call's
// seconds of each op to the phase it runs in.
std::vector<prof::OpRow> mlpOps(int64_t steps, double& forward, double& backward, double& optimizer) {
    const std::vector<int64_t> widths{784, 512, 256, 128, 10};
    std::vector<prof::OpRow> rows;
    forward = backward = optimizer = 0.0;
    auto add = [&](const prof::OpCost& c, double perSecond, bool byFlops, double& phase) {
        prof::OpRow r;
        r.kind = c.kind;
        r.shape = c.shape;
        r.calls = steps;
        r.flops = c.flops;
        r.bytes = c.bytes;
        const double perCall = (byFlops ? c.flops : c.bytes) / perSecond;
        r.seconds = perCall * static_cast<double>(steps);
        phase += perCall;
        rows.push_back(std::move(r));
    };
    for (size_t i = 0; i + 1 < widths.size(); ++i) {
        const int64_t in = widths[i], out = widths[i + 1];
        const bool relu = i + 2 < widths.size();
        add(opcost::innerProduct(opcost::Pass::Forward, kBatch, in, out, true, relu), 140e9, true, forward);
        if (i > 0) add(opcost::innerProduct(opcost::Pass::BackwardData, kBatch, in, out, true, false), 130e9, true, backward);
        add(opcost::innerProduct(opcost::Pass::BackwardWeights, kBatch, in, out, true, false), 120e9, true, backward);
        if (relu) add(opcost::elementwise("eltwise_relu_backward", {kBatch, out}, 3, 1.0), 20e9, false, backward);
        add(opcost::optimizerUpdate("adam_update", in * out + out, 12.0, 28.0), 40e9, false, optimizer);
    }
    for (int64_t out : {512, 256})
        add(opcost::reorder({out, widths[0]}, out * widths[0] * 4, out * widths[0] * 4), 20e9, false, backward);
    return rows;
}

nlohmann::json experiment(int64_t steps) {
    return {{"name", "classify-bench"},
            {"seed", 42},
            {"data", {{"dataset", "fashion-mnist"}, {"path", "/usr/share/datasets/fashion-mnist"}, {"shuffle", true},
                      {"drop_remainder", false}}},
            {"model", {{"preset", "mlp"}}},
            {"optimizer", {{"type", "adam"}, {"learning_rate", 0.001}, {"beta1", 0.9}, {"beta2", 0.999},
                           {"epsilon", 1e-7}}},
            {"train", {{"batch_size", kBatch}, {"epochs", 0}, {"max_steps", steps}, {"eval_every_steps", 100},
                       {"eval_at_epoch_end", false}, {"threads", 2}}},
            {"strategy", {{"type", "single"}, {"replicas", 1}}}};
}

// Records the run and returns its id. Per step: input ≈ 7 %, ≈ 37 % over a tenth of the run in the
// middle (so the timeline has a window to tell apart), the compute phases from the op rows, an
// evaluation every 100 steps (charged to the next step), the in-memory pipeline's one stage.
profiler::RunId recordRun(const std::string& path, int64_t steps) {
    profiler::RunSpec spec;
    spec.name = "classify-bench";
    spec.config_json = experiment(steps).dump();
    spec.devices = "cpu:2";
    spec.global_batch = kBatch;
    spec.threads = 2;
    spec.dataset = "fashion-mnist";
    spec.model = "mlp";
    profiler::RunWriter writer(path, spec);
    double forward = 0, backward = 0, optimizer = 0;
    const std::vector<prof::OpRow> ops = mlpOps(steps, forward, backward, optimizer);
    RunSummary summary;
    for (int64_t i = 1; i <= steps; ++i) {
        const double wobble = 1.0 + 0.08 * std::sin(static_cast<double>(i) * 0.37);
        StepRecord r;
        r.step = i;
        r.epoch = (i - 1) / 469;
        r.samples = i % 469 == 0 ? 96 : kBatch;
        r.input_seconds = (i > steps / 2 && i <= steps / 2 + steps / 10 ? 2.0e-3 : 0.25e-3) * wobble;
        r.forward_seconds = forward * 1.05 / wobble;
        r.backward_seconds = backward * 1.05 / wobble;
        r.optimizer_seconds = optimizer * 1.02;
        r.other_seconds = 0.04e-3;
        r.step_seconds = r.input_seconds + r.forward_seconds + r.backward_seconds + r.optimizer_seconds + r.other_seconds;
        r.samples_per_second = static_cast<double>(r.samples) / r.step_seconds;
        r.learning_rate = 1e-3;
        r.loss = 2.3 * std::exp(-static_cast<double>(i) / 800.0) + 0.25;
        r.eval_seconds = i > 1 && (i - 1) % 100 == 0 ? 0.08 : 0.0;
        summary.train_seconds += r.step_seconds;
        r.wall_seconds = summary.train_seconds;
        r.input_stages.push_back({"batch", r.input_seconds * 0.9, 1, r.samples * 784 * 4, -1.0});
        writer.step(r);
        if (i % 100 == 0) {
            EvalRecord e;
            e.step = i;
            e.epoch = r.epoch;
            e.accuracy = 0.89 - 0.2 * std::exp(-static_cast<double>(i) / 1000.0);
            e.loss = 0.3;
            e.samples = 10000;
            e.eval_seconds = 0.08;
            e.wall_seconds = summary.train_seconds;
            writer.eval(e);
        }
    }
    // What RunProfiler::finish() records for a W1 run on this machine.
    writer.attributes({{runattr::kProfileThreads, "2"}, {runattr::kProfileHostCores, "2"},
                       {runattr::kMemoryParamsBytes, "2143272"}, {runattr::kMemoryGradsBytes, "2143272"},
                       {runattr::kMemoryOptimizerBytes, "4286544"}, {runattr::kMemoryActivationBytes, "1843200"},
                       {runattr::kMemoryPeakRssBytes, "251658240"}, {runattr::kMemoryDeviceBytes, "25769803776"},
                       {runattr::kMemoryDeviceSource, "host RAM"}, {runattr::kMemorySwappedPages, "0"},
                       {runattr::kMemoryMajorFaults, "0"}, {runattr::kHwAvailable, "false"},
                       {runattr::kHwUnavailableReason, "perf_event_open(cycles): the hypervisor exposes no PMU"}});
    writer.opStats(0, ops);
    summary.steps = steps;
    summary.final_loss = 0.25;
    summary.evaluations = steps / 100;
    summary.final_accuracy = summary.best_accuracy = 0.89;
    summary.throughput = static_cast<double>(steps * kBatch) / summary.train_seconds;
    summary.stop_reason = "max_steps";
    writer.finish(profiler::RunStatus::Completed, summary);
    // The machines row of this host (stand-in roofs: the benchmark times reading them, not measuring).
    profiler::roofsFor(path, 2, /*remeasure=*/true, [](int threads) {
        profiler::MachineRoofs roofs;
        roofs.threads = threads;
        roofs.cpu_model = "classify-bench stand-in";
        roofs.peak_gflops = 178.0;  // this machine's at 2 threads (docs/performance.md)
        roofs.bandwidth_gbs = 21.6;
        roofs.measured_at = "2026-01-01T00:00:00Z";
        return roofs;
    });
    return writer.runId();
}

}  // namespace

int classifyBench(const ClassifyBenchOptions& o) {
    namespace fs = std::filesystem;
    const fs::path dir = o.dir.empty() ? fs::temp_directory_path() : fs::path(o.dir);
    const fs::path path = dir / ("trainbench-classify-" + std::to_string(getpid()) + ".db");
    auto t0 = Clock::now();
    const profiler::RunId id = recordRun(path.string(), o.steps);
    const double recordSeconds = secondsSince(t0);
    const double storeMb = static_cast<double>(fs::file_size(path)) / 1e6;

    std::vector<double> open, read, classify, save, total;
    std::string label;
    size_t stepsRead = 0, opsRead = 0, windows = 0;
    bool roofs = false, memory = false;
    for (int rep = 0; rep < o.reps; ++rep) {
        const auto a = Clock::now();
        profiler::RunStore store = profiler::RunStore::open(path.string());
        const auto b = Clock::now();
        const profiler::ProfileInput in = store.profileInput(id);
        const auto c = Clock::now();
        const profiler::Verdict v = profiler::classify(in);
        const auto d = Clock::now();
        store.saveVerdict(id, v);
        const auto e = Clock::now();
        auto s = [](auto x, auto y) { return std::chrono::duration<double>(y - x).count(); };
        open.push_back(s(a, b));
        read.push_back(s(b, c));
        classify.push_back(s(c, d));
        save.push_back(s(d, e));
        total.push_back(s(a, e));
        label = profiler::verdictLabel(v.verdict.kind, v.verdict.severity);
        stepsRead = in.steps.size();
        opsRead = in.ops.size();
        windows = v.windows.size();
        roofs = in.roofs.has_value();
        memory = in.memory.has_value();
    }
    if (stepsRead != static_cast<size_t>(o.steps) || !roofs || !memory) {
        std::fprintf(stderr, "error: the run read back is not the one recorded (%zu steps, roofs %s, memory %s)\n",
                     stepsRead, roofs ? "yes" : "no", memory ? "yes" : "no");
        return 1;
    }
    const double worst = *std::max_element(total.begin(), total.end());
    std::printf("reclassify a stored run: %zu steps, %zu op rows, roofs and memory; store %.1f MB (recorded in %.2f s)\n",
                stepsRead, opsRead, storeMb, recordSeconds);
    std::printf("  verdict: %s, %zu timeline windows\n", label.c_str(), windows);
    std::printf("  median of %d reps (ms): open %.1f  profileInput %.1f  classify %.1f  saveVerdict %.1f\n", o.reps,
                median(open) * 1e3, median(read) * 1e3, median(classify) * 1e3, median(save) * 1e3);
    std::printf("  total %.1f ms median, %.1f ms worst  (goal < 1000 ms) %s\n", median(total) * 1e3, worst * 1e3,
                median(total) < 1.0 ? "met" : "NOT met");
    const nlohmann::json out = {{"bench", "classify"}, {"steps", stepsRead}, {"ops", opsRead}, {"reps", o.reps},
                                {"open_ms", median(open) * 1e3}, {"profile_input_ms", median(read) * 1e3},
                                {"classify_ms", median(classify) * 1e3}, {"save_verdict_ms", median(save) * 1e3},
                                {"total_ms", median(total) * 1e3}, {"total_ms_max", worst * 1e3}};
    if (o.keep) std::printf("  run store kept: %s (run %lld)\n", path.c_str(), static_cast<long long>(id.value));
    else
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path.string() + suffix);
    std::printf("%s\n", out.dump().c_str());
    return 0;
}

}  // namespace trainbench::bench
