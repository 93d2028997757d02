#include "app/run/runprofiler.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "profiler/machine/calibration.h"
#include "profiler/machine/machinecache.h"
#include "profiler/machine/memoryprobe.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "profiler/verdict/breakdown.h"
#include "profiler/verdict/rules.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

namespace {
std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
}  // namespace

RunProfiler::RunProfiler(const Experiment& experiment, std::string dbPath, int threads,
                         std::function<void(const std::string&)> log)
    : experiment_(experiment), dbPath_(std::move(dbPath)), threads_(profiler::resolveThreads(threads)),
      log_(std::move(log)) {}

RunProfiler::~RunProfiler() = default;

std::vector<engine::prof::OpRow> RunProfiler::emulatedOpRows() const {
    std::vector<engine::prof::OpRow> rows;
    for (size_t i = 0; i < emulation_->graph.ops.size(); ++i) {
        const engine::OpDesc& op = emulation_->graph.ops[i];
        engine::prof::OpRow r;
        r.kind = op.cost.kind;
        r.shape = op.cost.shape;
        r.calls = op.calls * emulatedSteps_;
        r.seconds = static_cast<double>(r.calls) * emulation_->timing.ops[i].seconds;
        r.flops = op.cost.flops;
        r.bytes = emulation_->timing.ops[i].bytes;  // at the run's precision (bf16 moves half)
        if (r.calls > 0) rows.push_back(std::move(r));
    }
    return engine::prof::mergeOpRows({rows});
}

void RunProfiler::setEmulation(Emulation emulation) { emulation_ = std::move(emulation); }

void RunProfiler::start(engine::Strategy& strategy, int64_t batchPerReplica) {
    const double deviceBytes = experiment_.device.memory_mb * 1024.0 * 1024.0;
    if (emulation_) {
        footprint_.params_bytes = emulation_->graph.params_bytes;
        footprint_.grads_bytes = emulation_->graph.grads_bytes;
        footprint_.optimizer_bytes = emulation_->graph.optimizer_bytes;
        footprint_.activation_bytes = emulation_->activation_bytes;
        footprint_.device_bytes = deviceBytes > 0 ? deviceBytes : emulation_->replica_memory_bytes;
        footprint_.device_source = deviceBytes > 0 ? "device.memory_mb" : emulation_->replica_label + " memory";
        watch_ = std::make_unique<profiler::MemoryWatch>();
        counters_.start();
        started_ = true;
        return;
    }
    footprint_ = profiler::footprintOf(strategy.model(), batchPerReplica,
                                       profiler::optimizerStateFloatsPerParam(experiment_.optimizer), deviceBytes);
    // Each mirrored replica in this process holds its own copy of everything.
    if (experiment_.strategy.type == engine::StrategyKind::Mirrored) {
        const double copies = static_cast<double>(strategy.replicas());
        footprint_.params_bytes *= copies;
        footprint_.grads_bytes *= copies;
        footprint_.optimizer_bytes *= copies;
        footprint_.activation_bytes *= copies;
    }
    watch_ = std::make_unique<profiler::MemoryWatch>();
    counters_.start();
    started_ = true;
}

void RunProfiler::finish(engine::Strategy& strategy, profiler::RunWriter& writer, int rank) {
    if (!started_) return;
    started_ = false;
    const profiler::HardwareCounters hw = counters_.stop();
    watch_->fill(footprint_);
    std::vector<std::pair<std::string, std::string>> a{
        {runattr::kProfileThreads, std::to_string(threads_)},
        {runattr::kProfileHostCores, std::to_string(std::thread::hardware_concurrency())},
        {runattr::kMemoryParamsBytes, number(footprint_.params_bytes)},
        {runattr::kMemoryGradsBytes, number(footprint_.grads_bytes)},
        {runattr::kMemoryOptimizerBytes, number(footprint_.optimizer_bytes)},
        {runattr::kMemoryActivationBytes, number(footprint_.activation_bytes)},
        {runattr::kMemoryPeakRssBytes, number(footprint_.peak_rss_bytes)},
        {runattr::kMemoryDeviceBytes, number(footprint_.device_bytes)},
        {runattr::kMemoryDeviceSource, footprint_.device_source},
        {runattr::kMemorySwappedPages, std::to_string(footprint_.swapped_pages)},
        {runattr::kMemoryMajorFaults, std::to_string(footprint_.major_faults)},
        {runattr::kHwAvailable, hw.available ? "true" : "false"},
    };
    if (!hw.available) a.emplace_back(runattr::kHwUnavailableReason, hw.unavailable_reason);
    auto put = [&](const char* key, const std::optional<double>& v) {
        if (v) a.emplace_back(key, number(*v));
    };
    put(runattr::kHwCycles, hw.cycles);
    put(runattr::kHwInstructions, hw.instructions);
    put(runattr::kHwCacheReferences, hw.cache_references);
    put(runattr::kHwCacheMisses, hw.cache_misses);
    if (hw.available) a.emplace_back(runattr::kHwSeconds, number(hw.seconds));
    if (emulation_) {
        a.emplace_back(runattr::kRoofsSource, emulation_->replica_label);
        a.emplace_back(runattr::kRoofsPeakGflops, number(emulation_->peak_gflops));
        a.emplace_back(runattr::kRoofsBandwidthGbs, number(emulation_->bandwidth_gbs));
    }
    std::vector<engine::prof::OpRow> ops = emulation_ ? emulatedOpRows() : strategy.opStats();
    // The steps the verdict counts: this process's first steps are its warm-up, whatever step it
    // resumed at (a resumed process sets its primitives up again).
    const size_t skip = std::min(profiler::warmupSteps(static_cast<size_t>(stepsSeen_)), early_.size());
    if (skip > 0) {
        ops = engine::prof::opRowsSince(ops, early_[skip - 1]);
        a.emplace_back(runattr::kOpsFirstStep, std::to_string(earlySteps_[skip - 1] + 1));
    }
    writer.attributes(a);
    writer.opStats(rank, ops);
    // The fastest op kind of the run (at least 10 ms of it, so that a first call's JIT does not
    // decide), to tell a cached peak that this machine has since outrun.
    fastestOpGFlops_ = 0.0;
    for (const engine::prof::OpRow& r : ops)
        if (r.seconds >= 0.01) fastestOpGFlops_ = std::max(fastestOpGFlops_, r.gflops());
}

void RunProfiler::afterStep(engine::Strategy& strategy, int64_t step) {
    ++stepsSeen_;
    if (emulation_ || early_.size() >= static_cast<size_t>(profiler::rules::kWarmupMaxSteps)) return;
    early_.push_back(strategy.opStats());
    earlySteps_.push_back(step);
}

void RunProfiler::calibrate() const {
    if (emulation_) return;  // the roofs are the emulated device's
    try {
        profiler::MachineRoofs roofs = profiler::roofsFor(dbPath_, threads_);
        if (fastestOpGFlops_ > kStaleRoof * roofs.peak_gflops) {
            // The roofs are cached per host and thread count; a machine whose speed drifts (a shared
            // VM) or was loaded when they were measured can outrun them, and a roofline with ops
            // above its roof misreads every one. Measured again, after training as always.
            if (log_) {
                char line[200];
                std::snprintf(line, sizeof line,
                              "machine: an op ran at %.0f GFLOP/s, above the peak of %.0f GFLOP/s measured %s: "
                              "measuring the roofs again",
                              fastestOpGFlops_, roofs.peak_gflops, roofs.measured_at.c_str());
                log_(line);
            }
            roofs = profiler::roofsFor(dbPath_, threads_, /*remeasure=*/true);
        }
        if (log_) {
            char line[160];
            std::snprintf(line, sizeof line, "machine: %.0f GFLOP/s, %.1f GB/s at %d thread(s) (roofline; %s)",
                          roofs.peak_gflops, roofs.bandwidth_gbs, roofs.threads, roofs.host.c_str());
            log_(line);
        }
    } catch (const std::exception& e) {
        if (log_) log_(std::string("machine roofs not available: ") + e.what());
    }
}

std::string RunProfiler::classifyStored(const std::string& dbPath, profiler::RunId id) {
    try {
        profiler::RunStore store = profiler::RunStore::open(dbPath);
        const profiler::ProfileInput input = store.profileInput(id);
        if (input.steps.empty()) return "no verdict: the run recorded no steps";
        const profiler::Verdict v = profiler::classify(input);
        if (!store.readOnly()) store.saveVerdict(id, v);
        return profiler::verdictLabel(v.verdict.kind, v.verdict.severity) + ": " + v.verdict.summary;
    } catch (const std::exception& e) {
        return std::string("no verdict: ") + e.what();
    }
}

}  // namespace trainbench::app
