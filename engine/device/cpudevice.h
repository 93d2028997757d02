#pragma once
// A place a replica runs: a oneDNN CPU engine, its stream, and the thread budget of its ops.
#include <oneapi/dnnl/dnnl.hpp>

#include <memory>

#include "engine/instrument/opstats.h"

namespace trainbench::engine {

// Gives the calling thread an OpenMP budget of `threads` (0: every core) for what it runs from now
// on, and sets flush-to-zero / denormals-are-zero in it and in its OpenMP team.
void bindComputeThreads(int threads);

class CpuDevice {
public:
    // threads = 0 uses every core. oneDNN here runs on OpenMP, so the budget is the OpenMP team size
    // of the thread that executes this device's primitives.
    explicit CpuDevice(int threads = 0);

    const dnnl::engine& engine() const { return engine_; }
    dnnl::stream& stream() { return stream_; }
    int threads() const { return threads_; }
    // Applies the thread budget to the calling thread (call on the thread that runs the device) and
    // sets flush-to-zero / denormals-are-zero in it and in its OpenMP team.
    void bindThreads() const;
    // The ops this device runs, timed (per-op statistics).
    prof::OpStats& ops() { return *ops_; }
    const prof::OpStats& ops() const { return *ops_; }

private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    int threads_;
    std::unique_ptr<prof::OpStats> ops_ = std::make_unique<prof::OpStats>();
};

}  // namespace trainbench::engine
