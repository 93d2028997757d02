#pragma once
// The profiler around one run process: the machine's roofs (measured once per host and thread
// count, cached in the store), the memory footprint against the device's memory, hardware
// counters, per-op statistics, an optional Chrome trace of a window of steps, and at the end the
// verdict, classified from what the store holds and saved with it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/experiment/experiment.h"
#include "engine/emulation/devicetiming.h"
#include "engine/device/opdesc.h"
#include "engine/strategy/strategy.h"
#include "engine/telemetry/runrecords.h"
#include "profiler/machine/memorywatch.h"
#include "profiler/machine/perfcounters.h"
#include "profiler/store/runid.h"
#include "profiler/store/runwriter.h"

namespace trainbench::app {

class RunProfiler {
public:
    // threads: compute threads per replica (0: every core). log may be empty.
    RunProfiler(const Experiment& experiment, std::string dbPath, int threads,
                std::function<void(const std::string&)> log);
    ~RunProfiler();

    // Before the first step: the footprint from the shapes, and the memory watch and counters started.
    void start(engine::Strategy& strategy, int64_t batchPerReplica);
    // After each training step of this process (before any evaluation that follows it).
    void afterStep(engine::Strategy& strategy, int64_t step);
    // After training: memory, counters and per-op statistics into the run's record. The per-op
    // statistics leave out the warm-up steps the verdict leaves out (a primitive's first call can
    // take milliseconds of one-time set-up), so that the op table and the step breakdown cover
    // the same steps.
    void finish(engine::Strategy& strategy, profiler::RunWriter& writer, int rank);

    // A run on emulated devices (before start()): its footprint is one replica's, against that
    // replica's memory; its per-op statistics are the virtual clock's (each op of the step graph at
    // its emulated time, over `steps` steps, set before finish()); its roofs are the device's.
    struct Emulation {
        engine::OpGraph graph;          // one replica's step
        engine::StepTiming timing;      // of that graph on the device
        double activation_bytes = 0.0;  // at the run's precision
        double replica_memory_bytes = 0.0;
        std::string replica_label;      // "tpu-v3 core"
        double peak_gflops = 0.0;       // the replica's matrix rate at the run's precision
        double bandwidth_gbs = 0.0;     // the replica's memory bandwidth
    };
    void setEmulation(Emulation emulation);
    void setEmulatedSteps(int64_t steps) { emulatedSteps_ = steps; }

private:
    std::vector<engine::prof::OpRow> emulatedOpRows() const;

public:

    // After training, once this process's part in a job is over: the roofs, cached, else measured
    // now; measured again when an op of this run outran the cached peak by 10 % or more. Not before
    // the first step: a job's other ranks would wait for this one in their first all-reduce, under
    // the job's timeout, while it measures for seconds on a loaded machine.
    void calibrate() const;

    // After the run's record is complete: classifies it from the store and saves the verdict,
    // findings and actions. Returns the verdict's line ("input-bound (high): ...") or, if the run
    // cannot be classified, why; never throws.
    static std::string classifyStored(const std::string& dbPath, profiler::RunId id);

private:
    const Experiment& experiment_;
    std::string dbPath_;
    int threads_;
    std::function<void(const std::string&)> log_;
    profiler::MemoryFootprint footprint_;
    std::optional<Emulation> emulation_;
    int64_t emulatedSteps_ = 0;
    double fastestOpGFlops_ = 0.0;  // of the run's op kinds (finish())
    // The op statistics after each of this process's first steps, up to the longest warm-up.
    std::vector<std::vector<engine::prof::OpRow>> early_;
    std::vector<int64_t> earlySteps_;  // the step each of early_ was taken after
    int64_t stepsSeen_ = 0;
    // calibrate() measures the roofs again when an op ran this much faster than the cached peak.
    static constexpr double kStaleRoof = 1.1;
    std::unique_ptr<profiler::MemoryWatch> watch_;
    profiler::PerfCounters counters_;
    bool started_ = false;
};

}  // namespace trainbench::app
