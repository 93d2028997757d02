#include "app/run/runprofiler.h"

#include <cstdio>
#include <thread>

#include "profiler/machine/calibration.h"
#include "profiler/machine/machinecache.h"
#include "profiler/machine/memoryprobe.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::app {

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

void RunProfiler::start(engine::Strategy& strategy, int64_t batchPerReplica) {
    const double deviceBytes = experiment_.device.memory_mb * 1024.0 * 1024.0;
    footprint_ = profiler::footprintOf(strategy.model(), batchPerReplica,
                                       profiler::optimizerStateFloatsPerParam(experiment_.optimizer), deviceBytes);
    // Each mirrored replica in this process holds its own copy of everything.
    if (strategy.name() == "mirrored") {
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
        {"profile.threads", std::to_string(threads_)},
        {"profile.host_cores", std::to_string(std::thread::hardware_concurrency())},
        {"memory.params_bytes", number(footprint_.params_bytes)},
        {"memory.grads_bytes", number(footprint_.grads_bytes)},
        {"memory.optimizer_bytes", number(footprint_.optimizer_bytes)},
        {"memory.activation_bytes", number(footprint_.activation_bytes)},
        {"memory.peak_rss_bytes", number(footprint_.peak_rss_bytes)},
        {"memory.device_bytes", number(footprint_.device_bytes)},
        {"memory.device_source", footprint_.device_source},
        {"memory.swapped_pages", std::to_string(footprint_.swapped_pages)},
        {"memory.major_faults", std::to_string(footprint_.major_faults)},
        {"hw.available", hw.available ? "true" : "false"},
    };
    if (!hw.available) a.emplace_back("hw.unavailable_reason", hw.unavailable_reason);
    auto put = [&](const char* key, const std::optional<double>& v) {
        if (v) a.emplace_back(key, number(*v));
    };
    put("hw.cycles", hw.cycles);
    put("hw.instructions", hw.instructions);
    put("hw.cache_references", hw.cache_references);
    put("hw.cache_misses", hw.cache_misses);
    if (hw.available) a.emplace_back("hw.seconds", number(hw.seconds));
    writer.attributes(a);
    writer.opStats(rank, strategy.opStats());
}

void RunProfiler::calibrate() const {
    try {
        const profiler::MachineRoofs roofs = profiler::roofsFor(dbPath_, threads_);
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
