// `allreduce`: what GlooCollective costs over the Gloo calls it wraps. Each worker process joins two
// groups through one store: a raw Gloo context (its own device and pairs, gloo::allreduce with the
// ring algorithm and gloo::sum<float>) and a GlooCollective. For each size the two sides alternate
// op by op (A B, then B A); rank 0 reports the median time per all-reduce of each, the ratio of the
// medians and the ratio of the total times. Bus bandwidth as NCCL defines it for all-reduce:
// 2(n-1)/n x bytes / time.
#include "bench/allreducebench.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "bench/benchutil.h"
#include "engine/collective/gloocollective.h"
#include "engine/rendezvous/rendezvousclient.h"
#include "engine/rendezvous/rendezvousserver.h"

extern char** environ;

namespace trainbench::bench {

namespace {

using namespace std::chrono_literals;
constexpr const char* kTokenVariable = "TRAINBENCH_JOB_TOKEN";

template <class F>
double secondsPerOp(int ops, F&& op) {
    const auto t0 = Clock::now();
    for (int i = 0; i < ops; ++i) op();
    return secondsSince(t0) / ops;
}

}  // namespace

int allreduceBench(int ranks, double seconds) {
    engine::RendezvousServerConfig config;
    config.token = engine::RendezvousServer::randomToken();
    engine::RendezvousServer server(config);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, kTokenVariable, std::strlen(kTokenVariable)) != 0) env.emplace_back(*e);
    env.push_back(std::string(kTokenVariable) + "=" + config.token);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    std::vector<pid_t> pids;
    for (int r = 0; r < ranks; ++r) {
        std::vector<std::string> args{"trainbench-bench", "allreduce-worker", "--rank", std::to_string(r), "--size",
                                      std::to_string(ranks), "--store", server.address(), "-s", std::to_string(seconds)};
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        if (const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()); rc != 0) {
            std::fprintf(stderr, "allreduce: cannot start worker %d: %s\n", r, std::strerror(rc));
            return 1;
        }
        pids.push_back(pid);
    }
    int failed = 0;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return failed ? 1 : 0;
}

int allreduceWorker(int rank, int size, const std::string& store, double seconds) {
    const char* token = std::getenv(kTokenVariable);
    if (!token) {
        std::fprintf(stderr, "allreduce-worker: %s is not set (run `trainbench-bench allreduce`)\n", kTokenVariable);
        return 1;
    }
    try {
        const auto timeout = 60s;
        // Raw Gloo: the calls a program using Gloo directly would make, on a context of its own.
        engine::RendezvousClient client(store, token, timeout);
        gloo::rendezvous::PrefixStore rawStore("raw", client);
        auto raw = std::make_shared<gloo::rendezvous::Context>(rank, size);
        raw->setTimeout(timeout);
        gloo::transport::tcp::attr attr;
        attr.hostname = "127.0.0.1";
        auto device = gloo::transport::tcp::CreateDevice(attr);
        raw->connectFullMesh(rawStore, device);
        engine::GlooTransport transport;
        transport.keyPrefix = "trainbench";
        engine::GlooCollective ours(rank, size, store, token, timeout, transport);

        std::vector<float> buf;
        const auto rawAllreduce = [&] {
            gloo::AllreduceOptions opts(raw);
            opts.setOutput(buf.data(), buf.size());
            opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
            opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
            gloo::allreduce(opts);
        };
        const auto oursAllreduce = [&] { ours.allReduceSum(buf.data(), buf.size()); };

        const double busFactor = 2.0 * (size - 1) / size;
        if (rank == 0) {
            std::printf("all-reduce, %d processes on loopback, Gloo ring, fp32; raw and ours alternate op by op,\n"
                        "about %.1f s of pairs per size; times are medians per all-reduce\n",
                        size, seconds);
            double load = 0;
            if (FILE* f = std::fopen("/proc/loadavg", "r")) {
                if (std::fscanf(f, "%lf", &load) != 1) load = 0;
                std::fclose(f);
            }
            const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            std::printf("load average %.1f on %ld CPUs%s\n", load, cpus,
                        load > 0.5 * cpus ? ": a busy machine, trust the ratios more than the figures" : "");
            std::printf("bus bandwidth = 2(n-1)/n x bytes / time\n\n");
            std::printf("%10s %6s | %11s %8s | %11s %8s | %s\n", "bytes", "pairs", "raw Gloo us", "GB/s", "ours us",
                        "GB/s", "ours/raw: p10, median, total");
        }
        for (size_t bytes : {size_t{4} << 10, size_t{256} << 10, size_t{4} << 20, size_t{16} << 20}) {
            buf.assign(bytes / sizeof(float), 0.0f);  // zeros stay zeros: no overflow, no denormals
            for (int i = 0; i < 3; ++i) {  // warm up both: buffers, caches, TCP windows
                rawAllreduce();
                oursAllreduce();
            }
            // Every rank runs rank 0's count of pairs, about `seconds` worth however loaded the machine is.
            const double perPair = secondsPerOp(5, [&] {
                rawAllreduce();
                oursAllreduce();
            });
            float pairsToRun = static_cast<float>(std::clamp(seconds / perPair, 20.0, 20000.0));
            ours.broadcast(&pairsToRun, 1, 0);
            const int pairs = static_cast<int>(pairsToRun);
            // One by one, alternating which goes first: the machine's hiccups (milliseconds here, on a
            // shared VM) hit both sides alike, and medians drop them.
            std::vector<double> rawT, oursT;
            for (int i = 0; i < pairs; ++i) {
                double a = 0, b = 0;
                if (i % 2 == 0) {
                    a = secondsPerOp(1, rawAllreduce);
                    b = secondsPerOp(1, oursAllreduce);
                } else {
                    b = secondsPerOp(1, oursAllreduce);
                    a = secondsPerOp(1, rawAllreduce);
                }
                rawT.push_back(a);
                oursT.push_back(b);
            }
            if (rank == 0) {
                const double ta = median(rawT), tb = median(oursT);
                const double sumA = std::accumulate(rawT.begin(), rawT.end(), 0.0);
                const double sumB = std::accumulate(oursT.begin(), oursT.end(), 0.0);
                // Bandwidth ratio ours/raw = time raw / time ours. The 10th percentiles are the ops no
                // hiccup hit: the steadiest view of what the wrapper itself costs.
                std::printf("%10zu %6d | %11.1f %8.3f | %11.1f %8.3f | %.3f, %.3f, %.3f\n", bytes, pairs, ta * 1e6,
                            busFactor * bytes / ta / 1e9, tb * 1e6, busFactor * bytes / tb / 1e9,
                            percentile(rawT, 0.1) / percentile(oursT, 0.1), ta / tb, sumA / sumB);
                std::fflush(stdout);
            }
        }
        if (rank == 0) std::printf("\ngoal: ours/raw >= 0.90\n");
        ours.barrier();
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "allreduce-worker rank %d: %s\n", rank, e.what());
        return 1;
    }
}

}  // namespace trainbench::bench
