#pragma once
// Collective over Open MPI between the processes of a multi_worker job launched by an MPI launcher
// (`mpirun`, which `trainbench-cli run` starts for strategy.collective "mpi", or `srun --mpi=pmix`
// from a launch script). On one host Open MPI moves the data through shared memory (its `vader`
// transport), where Gloo's TCP ring pays the loopback stack on every message; across hosts it uses
// whatever the MPI installation does (TCP, InfiniBand).
//
// MPI itself has no deadlines: an operation waits for ever for a peer that stopped. So every
// operation here is watched: when one has not completed within the timeout, the watchdog says so on
// stderr (naming this rank, the operation and its size) and ends this process, and the launcher
// (mpirun) then ends the others and reports the job failed.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/collective/collective.h"

namespace trainbench::engine {

// The ranks of this process's MPI job, as the launcher set them up.
struct MpiWorld {
    int rank = 0;
    int size = 1;
};

// True when an MPI launcher started this process as one rank of a job (Open MPI's mpirun sets
// OMPI_COMM_WORLD_SIZE; PMIx launchers such as srun --mpi=pmix set PMIX_RANK).
bool launchedByMpiLauncher();
// Initialises MPI once per process (MPI_THREAD_SERIALIZED: the strategy's threads take turns) and
// finalises it at exit; later calls return the same world. Throws CollectiveError when the process was
// not started by an MPI launcher (MPI would make it a job of one) or the library lacks the thread level.
MpiWorld initMpi();
// The process is ending: with `success`, MPI_Finalize (which waits for the other ranks to finalise
// too); without, nothing, so that the launcher sees a rank end without finalising and ends the
// others at once (they may be waiting in a collective for this one). No-op when MPI was not started.
void finishMpi(bool success);

class MpiCollective final : public Collective {
public:
    // What the watchdog does when an operation overruns: by default it prints `message` to stderr
    // and ends the process with status 1 (so that the launcher ends the job).
    using OnTimeout = std::function<void(const std::string& message)>;
    // A group of every rank of the job (a duplicate of MPI_COMM_WORLD, so no other MPI traffic of the
    // process can match its messages). Calls initMpi(). Errors in MPI calls are returned, not fatal, and
    // thrown as CollectiveError naming the rank and the operation.
    explicit MpiCollective(std::chrono::milliseconds timeout, OnTimeout onTimeout = {});
    ~MpiCollective() override;
    MpiCollective(const MpiCollective&) = delete;
    MpiCollective& operator=(const MpiCollective&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    // MPI_Allreduce in place. Every rank holds the same bits afterwards: Open MPI's algorithms sum
    // each element in one order and copy it (ring, reduce-scatter + all-gather) or combine the same
    // two partial sums on both sides of a pair (recursive doubling), and float addition commutes.
    void allReduceSum(float* data, size_t count) override;
    void broadcast(float* data, size_t count, int root) override;
    void barrier() override;

private:
    // Marks an operation as under way for the watchdog, and as done when it goes out of scope: a
    // few atomic stores, no lock and no wake-up, so small all-reduces cost what MPI's do.
    class Watch;
    void watchdog();

    struct Comm;                  // the MPI_Comm (mpi.h stays out of this header)
    std::unique_ptr<Comm> comm_;
    int rank_ = 0, size_ = 1;
    std::chrono::milliseconds timeout_;
    OnTimeout onTimeout_;
    // The operation under way: odd while one is (each start and end adds one), its kind, size, root
    // and start (steady clock, ns). The watchdog reads them every few milliseconds.
    std::atomic<uint64_t> sequence_{0};
    std::atomic<const char*> op_{""};
    std::atomic<size_t> count_{0};
    std::atomic<int> root_{0};
    std::atomic<int64_t> startedNs_{0};
    std::mutex mu_;               // the watchdog's sleep, cut short when the collective is destroyed
    std::condition_variable cv_;
    bool quit_ = false;
    std::thread watchdog_;
};

}  // namespace trainbench::engine
