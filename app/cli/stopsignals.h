#pragma once
// Turns SIGINT/SIGTERM (and SIGUSR2, which mpirun forwards to an MPI job's ranks) into a stop request without ever running a signal handler on a compute thread.
//
// Why not a plain handler: oneDNN 2.x's JIT GEMM kernels point rsp into the heap while they run, so a
// handler that interrupts one writes its signal frame over heap memory (oneDNN issue #4845, fixed
// upstream in 3.x; Debian 12 ships 2.6). So the signals are blocked in every thread (the mask is
// inherited by OpenMP's pool and the store's writer thread) and received by one thread in sigwait().
#include <atomic>
#include <thread>

namespace trainbench::cli {

class StopSignals {
public:
    // Call first thing in main, before any other thread exists.
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // Set by the first SIGINT or SIGTERM; a second one ends the process at once (exit 130).
    const std::atomic<bool>& requested() const { return requested_; }

private:
    std::atomic<bool> requested_{false};
    std::thread waiter_;
};

}  // namespace trainbench::cli
