#include "engine/collective/mpicollective.h"

// The C API only: Open MPI's mpi.h otherwise declares its deprecated C++ bindings (libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

std::once_flag g_mpiInit;
MpiWorld g_world;
std::string g_mpiInitError;

std::string mpiErrorText(int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
    return std::string(text, static_cast<size_t>(len));
}

// MPI's counts are ints: larger buffers go in parts of at most this many elements.
constexpr size_t kMaxMpiCount = static_cast<size_t>(INT_MAX / 2);

}  // namespace

bool launchedByMpiLauncher() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
           std::getenv("PMI_RANK") != nullptr;
}

MpiWorld initMpi() {
    std::call_once(g_mpiInit, [] {
        if (!launchedByMpiLauncher()) {
            g_mpiInitError = "strategy.collective 'mpi' needs the job's processes started by an MPI launcher "
                             "(mpirun, srun --mpi=pmix); `trainbench-cli run` starts mpirun itself";
            return;
        }
        int initialised = 0;
        MPI_Initialized(&initialised);
        int provided = MPI_THREAD_SINGLE;
        if (!initialised && MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
            g_mpiInitError = "MPI_Init_thread failed";
            return;
        }
        if (initialised) MPI_Query_thread(&provided);
        if (provided < MPI_THREAD_SERIALIZED) {
            g_mpiInitError = "the MPI library offers thread level " + std::to_string(provided) +
                             ", below MPI_THREAD_SERIALIZED (gradients are reduced from the backward pass's thread)";
            return;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
    });
    if (!g_mpiInitError.empty()) throw CollectiveError(g_mpiInitError);
    return g_world;
}

void finishMpi(bool success) {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (!initialised || finalised) return;
    if (success) {
        MPI_Finalize();
        return;
    }
    // Ending without MPI_Finalize tells the launcher this rank failed: it ends the job's other ranks
    // at once, where a finalize would wait for peers that may be stuck waiting for this one.
}

struct MpiCollective::Comm {
    MPI_Comm comm = MPI_COMM_NULL;
};

class MpiCollective::Watch {
public:
    Watch(MpiCollective& c, const char* op, size_t count, int root = 0) : c_(c) {
        c_.op_.store(op, std::memory_order_relaxed);
        c_.count_.store(count, std::memory_order_relaxed);
        c_.root_.store(root, std::memory_order_relaxed);
        c_.startedNs_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch()).count(),
                            std::memory_order_relaxed);
        c_.sequence_.fetch_add(1, std::memory_order_release);
    }
    ~Watch() { c_.sequence_.fetch_add(1, std::memory_order_release); }
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

private:
    MpiCollective& c_;
};

MpiCollective::MpiCollective(std::chrono::milliseconds timeout, OnTimeout onTimeout)
    : comm_(std::make_unique<Comm>()), timeout_(timeout), onTimeout_(std::move(onTimeout)) {
    const MpiWorld world = initMpi();
    rank_ = world.rank;
    size_ = world.size;
    if (const int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm); rc != MPI_SUCCESS)
        throw CollectiveError("rank " + std::to_string(rank_) + ": MPI_Comm_dup: " + mpiErrorText(rc));
    MPI_Comm_set_errhandler(comm_->comm, MPI_ERRORS_RETURN);
    if (!onTimeout_)
        onTimeout_ = [](const std::string& message) {
            std::fprintf(stderr, "%s\n", message.c_str());
            std::fflush(stderr);
            std::_Exit(1);
        };
    watchdog_ = std::thread([this] { watchdog(); });
}

MpiCollective::~MpiCollective() {
    {
        std::lock_guard lock(mu_);
        quit_ = true;
    }
    cv_.notify_all();
    watchdog_.join();
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised && comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

void MpiCollective::watchdog() {
    // Looks often enough to notice an overrun within a tenth of the timeout (at most every 100 ms).
    const auto every = std::clamp(timeout_ / 10, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
    uint64_t reported = 0;  // the operation already reported (a test's handler returns)
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, every, [&] { return quit_; })) {
        const uint64_t seq = sequence_.load(std::memory_order_acquire);
        if (seq % 2 == 0 || seq == reported) continue;
        const int64_t started = startedNs_.load(std::memory_order_relaxed);
        const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch()).count();
        if (now - started < std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count()) continue;
        if (sequence_.load(std::memory_order_acquire) != seq) continue;  // it ended meanwhile
        reported = seq;
        std::string op = op_.load(std::memory_order_relaxed);
        if (op != "barrier") op += " of " + std::to_string(count_.load(std::memory_order_relaxed)) + " floats";
        if (op.rfind("broadcast", 0) == 0) op += " from rank " + std::to_string(root_.load(std::memory_order_relaxed));
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.3g", static_cast<double>(timeout_.count()) / 1000.0);
        const std::string message = "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": MPI " + op +
                                    " did not complete within " + seconds +
                                    " s (strategy.timeout_s): a peer is lost or stopped; ending this rank so that "
                                    "the launcher ends the job";
        lock.unlock();
        onTimeout_(message);
        lock.lock();
    }
}

void MpiCollective::allReduceSum(float* data, size_t count) {
    Watch watch(*this, "all-reduce", count);
    for (size_t done = 0; done < count;) {
        const size_t part = std::min(kMaxMpiCount, count - done);
        const int rc = MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(part), MPI_FLOAT, MPI_SUM, comm_->comm);
        if (rc != MPI_SUCCESS)
            throw CollectiveError("rank " + std::to_string(rank_) + ": MPI all-reduce of " + std::to_string(count) +
                                  " floats: " + mpiErrorText(rc));
        done += part;
    }
}

void MpiCollective::broadcast(float* data, size_t count, int root) {
    Watch watch(*this, "broadcast", count, root);
    for (size_t done = 0; done < count;) {
        const size_t part = std::min(kMaxMpiCount, count - done);
        const int rc = MPI_Bcast(data + done, static_cast<int>(part), MPI_FLOAT, root, comm_->comm);
        if (rc != MPI_SUCCESS)
            throw CollectiveError("rank " + std::to_string(rank_) + ": MPI broadcast of " + std::to_string(count) +
                                  " floats from rank " + std::to_string(root) + ": " + mpiErrorText(rc));
        done += part;
    }
}

void MpiCollective::barrier() {
    Watch watch(*this, "barrier", 0);
    if (const int rc = MPI_Barrier(comm_->comm); rc != MPI_SUCCESS)
        throw CollectiveError("rank " + std::to_string(rank_) + ": MPI barrier: " + mpiErrorText(rc));
}

}  // namespace trainbench::engine
