#pragma once
// What the profiler knows about the machine a run used: the roofline's roofs (measured once per host
// and thread count, cached in the run store's machines table), the memory a run used against the
// device's, and hardware counters where the kernel lets us read them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::profiler {

// The roofline's roofs for one host and thread count.
struct MachineRoofs {
    std::string host;
    int threads = 0;
    std::string cpu_model;
    double peak_gflops = 0.0;    // fp32, large oneDNN matmul
    double bandwidth_gbs = 0.0;  // STREAM-triad-like, arrays far larger than the caches
    std::string measured_at;     // ISO-8601 UTC
    // How they were measured (matrix size, array bytes, repetitions, best times), as a JSON object:
    // stored in machines.details_json so a surprising roof can be checked later.
    std::string details_json = "{}";
    // FLOP per byte where the roofs meet: ops below it cannot reach peak compute.
    double ridge() const { return bandwidth_gbs > 0 ? peak_gflops / bandwidth_gbs : 0.0; }
};

// A run's memory, from shapes and from the process, against the device's memory.
// One way to split a model that (nearly) fills its emulated GPU into pipeline stages, each on a GPU
// of its own (app/run/splitadvice.h), with what the fullest stage's GPU then holds.
struct PipelineSplit {
    int stages = 0;
    int micro_batches = 0;
    bool recompute = false;
    double needed_bytes = 0.0;      // on the fullest stage's GPU
    double capacity_bytes = 0.0;    // one GPU's memory
    double activation_bytes = 0.0;  // of that, activations
};

struct MemoryFootprint {
    double params_bytes = 0.0;
    double grads_bytes = 0.0;
    double optimizer_bytes = 0.0;    // optimizer state (Adam: m and v; SGD with momentum: v)
    double activation_bytes = 0.0;   // input batch, layer outputs and their gradients kept for backward, one batch
    double peak_rss_bytes = 0.0;     // peak resident set of the run process (VmHWM)
    double device_bytes = 0.0;       // the device's memory
    std::string device_source;       // "host RAM" or "device.memory_mb" (the experiment's limit)
    int64_t swapped_pages = 0;       // pages swapped in or out (system-wide) while the run trained
    int64_t major_faults = 0;        // the process's major page faults while it trained
    std::vector<PipelineSplit> splits;  // an emulated GPU near capacity: the splits that fit (fewest stages first)
    // What the model needs by shapes (parameters, gradients, optimizer state, activations).
    double modelBytes() const { return params_bytes + grads_bytes + optimizer_bytes + activation_bytes; }
};

// Hardware counters over the training loop, or why there are none.
struct HardwareCounters {
    bool available = false;
    // Why there are none, e.g. "perf_event_open(cycles): No such file or directory: the CPU or
    // hypervisor exposes no PMU". When available, names any counter that could not be opened.
    std::string unavailable_reason;
    std::optional<double> cycles, instructions, cache_references, cache_misses;
    double seconds = 0.0;            // wall time they were counted over
};

}  // namespace trainbench::profiler
