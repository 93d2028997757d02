// `allreduce-mpi`: what MpiCollective costs over the MPI_Allreduce it wraps, and what it gains over
// Gloo's TCP ring, between local processes. The bench starts `mpirun -np N` of this executable's
// `allreduce-mpi-worker`; each rank makes three groups: a raw MPI communicator of its own
// (MPI_Allreduce in place, as a program using MPI directly would call it), an MpiCollective, and a
// GlooCollective meeting through a rendezvous store rank 0 serves (its address and token sent to the
// others over MPI). For each size the three alternate op by op, in a rotating order, each op
// started after an untimed barrier; rank 0 prints the medians, ours/raw, and Gloo/ours.
#include "bench/mpiallreducebench.h"

// The C API only: Open MPI's mpi.h otherwise declares its deprecated C++ bindings (libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/job/mpiruntaskhost.h"
#include "app/job/spawnprocess.h"
#include "bench/benchutil.h"
#include "engine/collective/gloocollective.h"
#include "engine/collective/mpicollective.h"
#include "engine/rendezvous/rendezvousserver.h"

namespace trainbench::bench {

int mpiAllreduceBench(int ranks, double seconds) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::vector<std::string> argv = app::MpirunTaskHost::mpirunArgv(
        ranks, {self, "allreduce-mpi-worker", "-s", std::to_string(seconds)}, ::geteuid() == 0);
    try {
        const pid_t pid = app::spawnInOwnGroup("/usr/bin/mpirun", argv, nullptr, nullptr);
        int status = 0;
        ::waitpid(pid, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "allreduce-mpi: cannot start mpirun: %s\n", e.what());
        return 1;
    }
}

int mpiAllreduceWorker(double seconds) {
    try {
        using namespace std::chrono_literals;
        const auto timeout = 60s;
        engine::MpiCollective ours(timeout);
        const int rank = ours.rank(), size = ours.size();
        MPI_Comm raw = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &raw);

        // Gloo's group: rank 0 serves the store; its address and the token reach the others over MPI.
        std::unique_ptr<engine::RendezvousServer> server;
        std::array<char, 256> meet{};
        if (rank == 0) {
            engine::RendezvousServerConfig config;
            config.token = engine::RendezvousServer::randomToken();
            server = std::make_unique<engine::RendezvousServer>(config);
            const std::string text = server->address() + " " + config.token;
            std::snprintf(meet.data(), meet.size(), "%s", text.c_str());
        }
        MPI_Bcast(meet.data(), static_cast<int>(meet.size()), MPI_CHAR, 0, raw);
        const std::string meetText(meet.data());
        const size_t space = meetText.find(' ');
        engine::GlooCollective gloo(rank, size, meetText.substr(0, space), meetText.substr(space + 1), timeout);

        std::vector<float> buf;
        const std::array<std::function<void()>, 3> ops = {
            [&] { MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(buf.size()), MPI_FLOAT, MPI_SUM, raw); },
            [&] { ours.allReduceSum(buf.data(), buf.size()); },
            [&] { gloo.allReduceSum(buf.data(), buf.size()); }};
        // Each timed op starts with the ranks aligned (an untimed barrier), so that none absorbs the
        // skew the op before it left (Gloo's ranks leave its all-reduce at different times).
        const auto timeOne = [&raw](const std::function<void()>& op) {
            MPI_Barrier(raw);
            const auto t0 = Clock::now();
            op();
            return secondsSince(t0);
        };
        if (rank == 0) {
            double load = 0;
            if (FILE* f = std::fopen("/proc/loadavg", "r")) {
                if (std::fscanf(f, "%lf", &load) != 1) load = 0;
                std::fclose(f);
            }
            std::printf("all-reduce, %d processes on this machine (mpirun), fp32, in place; raw MPI_Allreduce, "
                        "MpiCollective and GlooCollective alternate op by op,\nabout %.1f s per size; times are "
                        "medians per all-reduce; load average %.1f on %ld CPUs\n\n",
                        size, seconds, load, sysconf(_SC_NPROCESSORS_ONLN));
            std::printf("%10s %6s | %10s | %10s | %10s | %8s %8s | %s\n", "bytes", "rounds", "raw MPI us", "ours us",
                        "Gloo us", "ours/raw", "(p10)", "Gloo/ours");
        }
        for (size_t bytes : {size_t{4} << 10, size_t{64} << 10, size_t{256} << 10, size_t{1} << 20, size_t{2} << 20,
                             size_t{4} << 20, size_t{16} << 20}) {
            buf.assign(bytes / sizeof(float), 0.0f);  // zeros stay zeros: no overflow, no denormals
            for (int i = 0; i < 3; ++i)
                for (const auto& op : ops) op();
            double perRound = 0;
            for (int i = 0; i < 3; ++i)
                for (const auto& op : ops) perRound += timeOne(op) / 3;
            float roundsToRun = static_cast<float>(std::clamp(seconds / std::max(perRound, 1e-9), 15.0, 20000.0));
            ours.broadcast(&roundsToRun, 1, 0);  // every rank runs rank 0's count
            const int rounds = static_cast<int>(roundsToRun);
            std::array<std::vector<double>, 3> t;
            for (int i = 0; i < rounds; ++i)
                for (int k = 0; k < 3; ++k) {
                    const int which = (i + k) % 3;  // each goes first, second and third in turn
                    t[static_cast<size_t>(which)].push_back(timeOne(ops[static_cast<size_t>(which)]));
                }
            if (rank == 0) {
                const double r = median(t[0]), o = median(t[1]), g = median(t[2]);
                std::printf("%10zu %6d | %10.1f | %10.1f | %10.1f | %8.3f %8.3f | %.2f\n", bytes, rounds, r * 1e6,
                            o * 1e6, g * 1e6, r / o, percentile(t[0], 0.1) / percentile(t[1], 0.1), g / o);
                std::fflush(stdout);
            }
        }
        if (rank == 0) std::printf("\ngoals: ours/raw >= 0.90 at every size; Gloo/ours >= 3 at 2 MiB\n");
        ours.barrier();
        gloo.barrier();
        MPI_Comm_free(&raw);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "allreduce-mpi-worker: %s\n", e.what());
        engine::finishMpi(false);
        return 1;
    }
    engine::finishMpi(true);
    return 0;
}

}  // namespace trainbench::bench
