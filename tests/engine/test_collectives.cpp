// Shared-memory collectives and bucketed gradient reduction: every combination of ranks, buffer
// sizes and bucket sizes against a naive sum, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/emulation/opgraph.h"
#include "engine/emulation/virtualclock.h"
#include "engine/model/model.h"
#include "engine/model/modelspec.h"
#include "engine/strategy/gradientsync.h"
#include "engine/collective/sharedmemorycollective.h"
#include "engine/util/rng.h"

namespace trainbench::engine {
namespace {

// Runs fn(rank, collective) on `ranks` threads of one shared-memory group; rethrows a failure.
void onRanks(int ranks, const std::function<void(int, Collective&)>& fn) {
    auto group = std::make_shared<SharedMemoryGroup>(ranks);
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            try {
                SharedMemoryCollective c(group, r);
                fn(r, c);
            } catch (...) {
                errors[static_cast<size_t>(r)] = std::current_exception();
            }
        });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

std::vector<float> values(int rank, size_t n) {
    Rng rng(1000 + static_cast<uint64_t>(rank));
    std::vector<float> v(n);
    for (float& x : v) x = rng.uniform() * 2.0f - 1.0f;
    return v;
}

// b0 + b1 + ... in rank order, in float: what every rank must end up with, exactly.
std::vector<float> naiveSum(int ranks, size_t n) {
    std::vector<float> sum = values(0, n);
    for (int r = 1; r < ranks; ++r) {
        const std::vector<float> v = values(r, n);
        for (size_t i = 0; i < n; ++i) sum[i] += v[i];
    }
    return sum;
}

bool bitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

const size_t kLengths[] = {0, 1, 15, 17, 1001, 262147};

TEST(SharedMemoryCollective, AllReduceMatchesNaiveSumOnEveryRank) {
    for (int ranks : {1, 2, 3, 4}) {
        for (size_t n : kLengths) {
            const std::vector<float> expected = naiveSum(ranks, n);
            std::vector<std::vector<float>> got(static_cast<size_t>(ranks));
            onRanks(ranks, [&](int r, Collective& c) {
                std::vector<float> v = values(r, n);
                c.allReduceSum(v.data(), v.size());
                got[static_cast<size_t>(r)] = std::move(v);
            });
            for (int r = 0; r < ranks; ++r)
                EXPECT_TRUE(bitwiseEqual(got[static_cast<size_t>(r)], expected)) << ranks << " ranks, " << n
                                                                                  << " floats, rank " << r;
        }
    }
}

TEST(SharedMemoryCollective, BroadcastAndRepeatedOperations) {
    onRanks(3, [](int r, Collective& c) {
        for (int round = 0; round < 20; ++round) {
            const int root = round % 3;
            std::vector<float> v = values(r + round, 1003);
            c.broadcast(v.data(), v.size(), root);
            EXPECT_TRUE(bitwiseEqual(v, values(root + round, 1003))) << "round " << round << " rank " << r;
            c.barrier();
        }
    });
}

TEST(SharedMemoryCollective, DifferentSizesFailOnEveryRank) {
    auto group = std::make_shared<SharedMemoryGroup>(2);
    std::vector<std::string> errors(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
            SharedMemoryCollective c(group, r);
            std::vector<float> v(r == 0 ? 10 : 12);
            try {
                c.allReduceSum(v.data(), v.size());
            } catch (const std::logic_error& e) {
                errors[static_cast<size_t>(r)] = e.what();
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors[0], "collective called with different sizes: rank 0 has 10 floats, rank 1 has 12");
    EXPECT_EQ(errors[1], "collective called with different sizes: rank 1 has 12 floats, rank 0 has 10");
    EXPECT_THROW(SharedMemoryCollective(group, 2), std::invalid_argument);
    EXPECT_THROW(SharedMemoryGroup(0), std::invalid_argument);
}

TEST(GradientSync, PlanGroupsAdjacentSpansIntoBuckets) {
    // Backward order: last layer (highest offset) first.
    const std::vector<GradientSync::Span> spans = {{1100, 10}, {1000, 100}, {0, 1000}};
    auto plan = GradientSync::plan(spans, 0);
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[1].offset, 1000);
    plan = GradientSync::plan(spans, 400);  // 110 floats = 440 bytes close the first bucket
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].offset, 1000);
    EXPECT_EQ(plan[0].count, 110);
    EXPECT_EQ(plan[0].layers, 2);
    EXPECT_EQ(plan[1].offset, 0);
    plan = GradientSync::plan(spans, 1 << 30);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].offset, 0);
    EXPECT_EQ(plan[0].count, 1110);
    EXPECT_THROW(GradientSync::plan({{1100, 10}, {0, 100}}, 0), std::invalid_argument);
}

// The emulator's virtual clock charges the buckets the real exchange forms: the same buckets from the
// op graph's layer sizes as GradientSync::plan from a real model's spans, for W1 and W2 at every
// bucket size from one per layer to one in all.
TEST(GradientSync, EmulatorFormsTheSameBucketsFromTheOpGraph) {
    for (const char* preset : {"mlp", "cnn"}) {
        ModelSpec spec;
        spec.preset = preset;
        spec.layers = presetLayers(preset);
        const Dims sample{1, 28, 28};
        CpuDevice device(1);
        const Model model(spec, sample, 10, device, 1);
        OptimizerConfig oc;
        const OpGraph graph = trainingStepGraph(spec, sample, 10, 8, oc);
        for (const double mib : {0.0, 0.01, 0.1, 0.5, 1.0, 25.0}) {
            SCOPED_TRACE(std::string(preset) + ", buckets of " + std::to_string(mib) + " MiB");
            const auto plan = GradientSync::plan(model.gradientSpans(), static_cast<size_t>(mib * 1024 * 1024));
            const std::vector<GradientBucket> emulated = gradientBuckets(graph.layer_params, mib * 1024 * 1024);
            ASSERT_EQ(emulated.size(), plan.size());
            for (size_t b = 0; b < plan.size(); ++b) {
                EXPECT_EQ(emulated[b].floats, plan[b].count) << "bucket " << b;
                EXPECT_EQ(emulated[b].layers, plan[b].layers) << "bucket " << b;
            }
        }
    }
}

// Layer sizes as backward reports them, the matrix of ranks x bucket sizes x overlap: every rank
// ends with the naive sum, and apply() sees each bucket once, in order, after it is reduced.
TEST(GradientSync, BucketedReductionMatchesNaiveSum) {
    const std::vector<int64_t> layerSizes = {5, 1001, 33, 70000, 1, 4096};
    int64_t total = 0;
    for (int64_t s : layerSizes) total += s;
    std::vector<GradientSync::Span> spans;  // last layer first
    int64_t end = total;
    for (auto it = layerSizes.rbegin(); it != layerSizes.rend(); ++it) {
        end -= *it;
        spans.emplace_back(end, *it);
    }
    for (int ranks : {1, 2, 3}) {
        const std::vector<float> want = naiveSum(ranks, static_cast<size_t>(total));
        for (size_t bucketBytes : {size_t{0}, size_t{4096}, size_t{1} << 20}) {
            for (bool overlap : {true, false}) {
                onRanks(ranks, [&](int r, Collective& c) {
                    std::vector<float> grads = values(r, static_cast<size_t>(total));
                    GradientSync sync(c, grads.data(), spans, bucketBytes, overlap);
                    for (int step = 0; step < 3; ++step) {
                        std::vector<float> g = values(r, static_cast<size_t>(total));
                        std::memcpy(grads.data(), g.data(), g.size() * sizeof(float));
                        sync.beginStep();
                        for (const auto& [off, count] : spans) sync.spanReady(off, count);
                        std::vector<int64_t> applied;
                        std::vector<uint8_t> touched(static_cast<size_t>(total), 0);
                        sync.finish([&](int64_t off, int64_t count) {
                            applied.push_back(off);
                            for (int64_t i = off; i < off + count; ++i) ++touched[static_cast<size_t>(i)];
                            // Reduced before it is applied.
                            EXPECT_EQ(std::memcmp(grads.data() + off, want.data() + off,
                                                  static_cast<size_t>(count) * sizeof(float)), 0);
                        });
                        EXPECT_EQ(applied.size(), sync.buckets().size());
                        for (size_t k = 0; k < applied.size(); ++k) EXPECT_EQ(applied[k], sync.buckets()[k].offset);
                        for (uint8_t t : touched) ASSERT_EQ(t, 1);
                        EXPECT_TRUE(bitwiseEqual(grads, want)) << ranks << " ranks, bucket " << bucketBytes
                                                               << (overlap ? " overlapped" : " after backward");
                        EXPECT_GE(sync.commSeconds(), 0.0);
                    }
                });
            }
        }
    }
}

// A replica with nothing to contribute (fewer examples than replicas) says so at once.
TEST(GradientSync, AllReadyAtOnce) {
    const std::vector<GradientSync::Span> spans = {{100, 50}, {0, 100}};
    onRanks(2, [&](int r, Collective& c) {
        std::vector<float> grads(150, r == 0 ? 1.0f : 0.0f);
        GradientSync sync(c, grads.data(), spans, 0, true);
        sync.beginStep();
        if (r == 0) {
            for (const auto& [off, count] : spans) sync.spanReady(off, count);
        } else {
            sync.spanReady(100, 50);
            sync.allReady();
        }
        sync.finish({});
        for (float g : grads) ASSERT_EQ(g, 1.0f);
        EXPECT_THROW(sync.spanReady(100, 50), std::logic_error);
    });
}

}  // namespace
}  // namespace trainbench::engine
