// One rank of an MpiCollective group, started by `mpirun` from tests/engine/test_mpicollective.cpp.
// Prints what it checked, one line each, so the test can compare ranks; exits 0 when all went well,
// 3 on CollectiveError, 5 on a wrong result, 1 otherwise.
//
// mpiworker exact     all-reduce of 1001 and of 1 Mi quarter-integers (exact in any order: the sum is
//                     checked), a broadcast from the last rank, a barrier
// mpiworker random    all-reduce of 100003 random floats; prints a hash of the result's bits, which
//                     every rank must print alike
// mpiworker hang      rank 1 sleeps 30 s before its all-reduce; the others' watchdog (timeout 500 ms)
//                     must end them saying what they waited for
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/collective/mpicollective.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"

using namespace trainbench::engine;

namespace {

struct WrongResult : std::runtime_error {
    using std::runtime_error::runtime_error;
};

float exactValue(int rank, size_t i) {  // quarter integers: any order of summation gives the same sum
    return static_cast<float>(static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 2001) - 1000) * 0.25f;
}

void exactAllReduce(MpiCollective& c, size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = exactValue(c.rank(), i);
    c.allReduceSum(v.data(), v.size());
    for (size_t i = 0; i < n; ++i) {
        float want = 0;
        for (int r = 0; r < c.size(); ++r) want += exactValue(r, i);
        if (v[i] != want)
            throw WrongResult("all-reduce of " + std::to_string(n) + ": element " + std::to_string(i) + " is " +
                              std::to_string(v[i]) + ", want " + std::to_string(want));
    }
    std::printf("rank %d: all-reduce of %zu exact\n", c.rank(), n);
}

uint64_t bitsHash(const std::vector<float>& v) {
    uint64_t h = 1469598103934665603ull;
    for (float x : v) {
        uint32_t b = 0;
        std::memcpy(&b, &x, sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "exact";
    try {
        MpiCollective c(std::chrono::milliseconds(scenario == "hang" ? 500 : 20'000));
        if (scenario == "exact") {
            exactAllReduce(c, 1001);
            exactAllReduce(c, size_t{1} << 20);
            const int root = c.size() - 1;
            std::vector<float> b(4097, c.rank() == root ? 0.0f : -1.0f);
            if (c.rank() == root)
                for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f;
            c.broadcast(b.data(), b.size(), root);
            for (size_t i = 0; i < b.size(); ++i)
                if (b[i] != static_cast<float>(i) * 0.5f) throw WrongResult("broadcast: element " + std::to_string(i));
            std::printf("rank %d: broadcast from rank %d exact\n", c.rank(), root);
            c.barrier();
            std::printf("rank %d of %d: done\n", c.rank(), c.size());
        } else if (scenario == "random") {
            Rng rng(77 + static_cast<uint64_t>(c.rank()));
            std::vector<float> v(100003);
            for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
            c.allReduceSum(v.data(), v.size());
            std::printf("rank %d: hash %016llx\n", c.rank(), static_cast<unsigned long long>(bitsHash(v)));
        } else if (scenario == "hang") {
            if (c.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(30));
            std::vector<float> v(256, 1.0f);
            c.allReduceSum(v.data(), v.size());
            std::printf("rank %d: the all-reduce completed\n", c.rank());
        }
        std::fflush(stdout);
    } catch (const WrongResult& e) {
        std::fprintf(stderr, "wrong result: %s\n", e.what());
        finishMpi(false);
        return 5;
    } catch (const CollectiveError& e) {
        std::fprintf(stderr, "collective error: %s\n", e.what());
        finishMpi(false);
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        finishMpi(false);
        return 1;
    }
    finishMpi(true);
    return 0;
}
