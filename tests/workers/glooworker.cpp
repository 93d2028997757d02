// One rank of a GlooCollective group, spawned by tests/engine/test_gloo.cpp (a process of its own,
// started fresh so no thread of the test process is inherited). Prints what it checked, one line
// each, so the test can compare ranks; exits 0 when all went well, else:
//   2 RendezvousError, 3 CollectiveError, 4 the loop ran out of time, 5 a wrong result, 1 other.
//
// glooworker --rank R --size N --token T [--store HOST:PORT | --serve FILE] [--timeout-ms MS] [--arrival-ms MS]
//            [--scenario matrix|loop|join|once] [--host ADDRESS]
//   --serve FILE  (rank 0) runs the job's RendezvousServer in this process, as the chief does, and
//                 writes its host:port to FILE once it listens.
//   --host        the address this rank's Gloo pairs listen on (default 127.0.0.1)
//   --arrival-ms  how long to wait for the other ranks to reach the store (GlooTransport::arrivalTimeout)
//   once          one exact all-reduce of 1001 and one of 1 Mi floats, then the barrier
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/collective/gloocollective.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"

using namespace trainbench::engine;

namespace {

struct Args {
    int rank = 0, size = 1;
    std::string token, store, serve, scenario = "matrix", host = "127.0.0.1";
    int timeoutMs = 10'000;
    int arrivalMs = 0;
};

struct WrongResult : std::runtime_error {
    using std::runtime_error::runtime_error;
};

float exactValue(int rank, size_t i) {  // quarter integers: any order of summation gives the same sum
    return static_cast<float>(static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 2001) - 1000) * 0.25f;
}

std::vector<float> randomValues(int rank, size_t n) {
    Rng rng(1000 + static_cast<uint64_t>(rank));
    std::vector<float> v(n);
    for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
    return v;
}

std::string hashOf(const float* p, size_t n) {  // FNV-1a over the bytes: equal bits, equal hash
    uint64_t h = 1469598103934665603ull;
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;
    char s[17];
    std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
    return s;
}

int64_t nowNs() {
    // steady_clock is CLOCK_MONOTONIC: the same clock in every process of the machine.
    const auto sinceBoot = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(sinceBoot).count();
}

void allReduceCase(Collective& c, const char* kind, size_t n) {
    const bool exact = std::string(kind) == "exact";
    std::vector<float> buf(n), expected(n, 0.0f);
    for (int r = 0; r < c.size(); ++r) {
        const std::vector<float> v = exact ? std::vector<float>() : randomValues(r, n);
        for (size_t i = 0; i < n; ++i) {
            const float x = exact ? exactValue(r, i) : v[i];
            expected[i] += x;
            if (r == c.rank()) buf[i] = x;
        }
    }
    c.allReduceSum(buf.data(), n);
    for (size_t i = 0; i < n; ++i) {
        const bool ok = exact ? buf[i] == expected[i] : std::fabs(buf[i] - expected[i]) <= 1e-5f;
        if (!ok)
            throw WrongResult(std::string("allReduceSum ") + kind + " of " + std::to_string(n) + " floats: element " +
                              std::to_string(i) + " is " + std::to_string(buf[i]) + ", expected " +
                              std::to_string(expected[i]));
    }
    std::printf("allreduce %s %zu %s\n", kind, n, hashOf(buf.data(), n).c_str());
}

void matrix(Collective& c) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{1001}, size_t{4} << 20}) allReduceCase(c, "exact", n);
    for (size_t n : {size_t{1}, size_t{1001}, size_t{4} << 20}) allReduceCase(c, "random", n);
    for (int root = 0; root < c.size(); ++root) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{1001}, size_t{1} << 20}) {
            std::vector<float> buf(n, -1.0f);
            if (c.rank() == root)
                for (size_t i = 0; i < n; ++i) buf[i] = exactValue(root, i);
            c.broadcast(buf.data(), n, root);
            for (size_t i = 0; i < n; ++i)
                if (buf[i] != exactValue(root, i))
                    throw WrongResult("broadcast from rank " + std::to_string(root) + " of " + std::to_string(n) +
                                      " floats: element " + std::to_string(i) + " is " + std::to_string(buf[i]));
            std::printf("broadcast %d %zu ok\n", root, n);
        }
    }
    // Ranks enter the barrier at different times; none may leave before the last one entered.
    std::this_thread::sleep_for(std::chrono::milliseconds(150 * c.rank()));
    const int64_t enter = nowNs();
    c.barrier();
    std::printf("barrier %lld %lld\n", static_cast<long long>(enter), static_cast<long long>(nowNs()));
}

int loop(Collective& c) {
    std::vector<float> buf(size_t{1} << 20, 1.0f);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int i = 0; std::chrono::steady_clock::now() < end; ++i) {
        c.allReduceSum(buf.data(), buf.size());
        if (i == 0) {
            std::printf("ready\n");
            std::fflush(stdout);
        }
    }
    return 4;
}

int run(const Args& a) {
    std::unique_ptr<RendezvousServer> server;  // declared first: outlives the collective, as in the chief
    std::string store = a.store;
    if (!a.serve.empty()) {
        RendezvousServerConfig config;
        config.token = a.token;
        server = std::make_unique<RendezvousServer>(config);
        store = server->address();
        std::ofstream(a.serve + ".tmp") << store << "\n";
        std::filesystem::rename(a.serve + ".tmp", a.serve);
    }
    GlooTransport transport;
    transport.hostname = a.host;
    transport.arrivalTimeout = std::chrono::milliseconds(a.arrivalMs);
    GlooCollective c(a.rank, a.size, store, a.token, std::chrono::milliseconds(a.timeoutMs), transport);
    if (a.scenario == "loop") return loop(c);
    if (a.scenario == "matrix") matrix(c);
    if (a.scenario == "once")
        for (size_t n : {size_t{1001}, size_t{1} << 20}) allReduceCase(c, "exact", n);
    c.barrier();  // the chief's store stays up until everyone has joined
    std::printf("done\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--rank") a.rank = std::stoi(v);
        else if (k == "--size") a.size = std::stoi(v);
        else if (k == "--token") a.token = v;
        else if (k == "--store") a.store = v;
        else if (k == "--serve") a.serve = v;
        else if (k == "--timeout-ms") a.timeoutMs = std::stoi(v);
        else if (k == "--arrival-ms") a.arrivalMs = std::stoi(v);
        else if (k == "--scenario") a.scenario = v;
        else if (k == "--host") a.host = v;
        else {
            std::fprintf(stderr, "glooworker: unknown option %s\n", k.c_str());
            return 1;
        }
    }
    try {
        return run(a);
    } catch (const RendezvousError& e) {
        std::fprintf(stderr, "RendezvousError: %s\n", e.what());
        return 2;
    } catch (const CollectiveError& e) {
        std::fprintf(stderr, "CollectiveError: %s\n", e.what());
        return 3;
    } catch (const WrongResult& e) {
        std::fprintf(stderr, "rank %d: wrong result: %s\n", a.rank, e.what());
        return 5;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
