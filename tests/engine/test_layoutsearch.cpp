// The layout planner's search (engine/emulation/layoutsearch.h): GPT-3 175B on 1,024 A100 80 GB
// against the layout and throughput Narayanan et al. report, the fast search against the exhaustive
// one, and the splits a model that does not fit one GPU would need.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <tuple>

#include "engine/emulation/layoutsearch.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

const TransformerShape kSearchGpt3{"gpt3-175b", 96, 12288, 96, 2048, 51200, 0};

GpuCluster a100Cluster(int count) {
    GpuCluster c;
    c.device = test::device("a100-sxm4-80gb");
    c.devices = count;
    return c;
}

using Mesh = std::tuple<int, int, int>;  // d, p, t

// The best layouts of the first `n` distinct meshes, in rank order.
std::vector<LayoutEstimate> bestPerMesh(const LayoutSearchResult& r, size_t n) {
    std::vector<LayoutEstimate> out;
    std::set<Mesh> seen;
    for (const LayoutEstimate& e : r.ranked) {
        if (!seen.insert({e.layout.data, e.layout.pipeline, e.layout.tensor}).second) continue;
        out.push_back(e);
        if (out.size() == n) break;
    }
    return out;
}

void printRow(const char* what, const LayoutEstimate& e) {
    std::printf("%-10s %-24s step %6.2f s  compute %5.2f  recompute %5.2f  bubble %4.2f  tp %4.2f  pp %5.3f  dp %5.3f  "
                "memory %5.1f GiB  %5.1f TFLOP/s per GPU (hardware %5.1f)\n",
                what, e.layout.text().c_str(), e.step_s, e.compute_s, e.recompute_s, e.bubble_s, e.tensor_comm_s,
                e.pipeline_comm_s, e.data_comm_s, e.memoryBytes() / test::kGiB, e.model_tflops_per_gpu,
                e.hardware_tflops_per_gpu);
}

// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
// (SC'21): GPT-3 175B (96 layers, hidden 12288, 96 heads, sequence 2048, vocabulary 51200) trained on
// 1,024 A100 GPUs at batch 1536 at 140 teraFLOP/s per GPU (section 5.1, end-to-end training time),
// counted with full activation recomputation, and in their Table 1 this model's degrees: tensor-
// parallel 8 within a DGX node, pipeline-parallel 16 across nodes; on 1,024 GPUs that leaves data-
// parallel 8. Micro-batch 1, full recomputation and 1F1B are our reading (docs/model-parallelism.md).
// "Among the top three" is checked on the d x p x t meshes, each ranked by its best layout: the
// planner's micro-batch, recomputation and schedule for a mesh may differ from what they ran.
TEST(LayoutSearch, Gpt3On1024A100sRanksNarayanansLayoutInTheTopThreeAt140TflopsWithin20Percent) {
    const TransformerCosts c = decoderCosts(kSearchGpt3);
    const GpuCluster cluster = a100Cluster(1024);
    Layout reported;
    reported.data = 8;
    reported.pipeline = 16;
    reported.tensor = 8;
    reported.micro_batch = 1;
    reported.recompute = Recompute::Full;

    const LayoutSearchResult all = searchLayoutsExhaustive(c, 1536, cluster, LayoutSpace{});
    const std::vector<LayoutEstimate> top = bestPerMesh(all, 3);
    ASSERT_EQ(top.size(), 3u);
    for (const LayoutEstimate& e : top) printRow("top mesh", e);
    const auto isReported = [](const LayoutEstimate& e) {
        return e.layout.data == 8 && e.layout.pipeline == 16 && e.layout.tensor == 8 && e.layout.micro_batch == 1;
    };
    EXPECT_TRUE(std::any_of(top.begin(), top.end(), isReported));

    // With the options Megatron-LM had then (no selective recomputation), too.
    LayoutSpace then;
    then.recompute = {Recompute::None, Recompute::Full};
    const std::vector<LayoutEstimate> topThen = bestPerMesh(searchLayoutsExhaustive(c, 1536, cluster, then), 3);
    for (const LayoutEstimate& e : topThen) printRow("2021 top", e);
    EXPECT_TRUE(std::any_of(topThen.begin(), topThen.end(), isReported));

    // The layout as they ran it: per-GPU throughput counted as they count it, within 20 % of 140.
    const LayoutEstimate e = estimateLayout(c, 1536, cluster, reported);
    printRow("reported", e);
    EXPECT_TRUE(e.fits);
    EXPECT_NEAR(e.hardware_tflops_per_gpu, 140.0, 0.2 * 140.0);
}

TEST(LayoutSearch, TheFastSearchReaches95PercentOfTheBestEstimatingAtMost10PercentOfTheLayouts) {
    struct Case {
        TransformerShape shape;
        int devices;
        int64_t batch;
    };
    // GPT-3 and the 530B and 1T models of Narayanan et al.'s Table 1 (their batch sizes), and GPT-3 on
    // other cluster sizes.
    const std::vector<Case> cases{{kSearchGpt3, 1024, 1536},
                                  {kSearchGpt3, 512, 1536},
                                  {kSearchGpt3, 1536, 1536},
                                  {{"530b", 105, 20480, 128, 2048, 51200, 0}, 2240, 2240},
                                  {{"1t", 128, 25600, 160, 2048, 51200, 0}, 3072, 3072}};
    for (const Case& k : cases) {
        const TransformerCosts c = decoderCosts(k.shape);
        const GpuCluster cluster = a100Cluster(k.devices);
        const LayoutSearchResult all = searchLayoutsExhaustive(c, k.batch, cluster, LayoutSpace{});
        const LayoutSearchResult fast = searchLayoutsFast(c, k.batch, cluster, LayoutSpace{});
        ASSERT_FALSE(all.ranked.empty()) << k.shape.name;
        ASSERT_FALSE(fast.ranked.empty()) << k.shape.name;
        const double ratio = all.ranked.front().step_s / fast.ranked.front().step_s;
        const double fraction = static_cast<double>(fast.evaluated) / static_cast<double>(all.evaluated);
        std::printf("%-10s on %4d: exhaustive %5lld layouts, best %s %.2f s; fast %3lld (%.1f %%), best %s %.2f s, "
                    "%.1f %% of the best\n",
                    k.shape.name.c_str(), k.devices, static_cast<long long>(all.evaluated),
                    all.ranked.front().layout.text().c_str(), all.ranked.front().step_s,
                    static_cast<long long>(fast.evaluated), 100 * fraction, fast.ranked.front().layout.text().c_str(),
                    fast.ranked.front().step_s, 100 * ratio);
        EXPECT_EQ(fast.candidates, all.evaluated);
        EXPECT_GE(ratio, 0.95) << k.shape.name << " on " << k.devices;
        EXPECT_LE(fraction, 0.10) << k.shape.name << " on " << k.devices;
    }
}

TEST(LayoutSearch, RejectedLayoutsSayWhy) {
    const LayoutSearchResult r = searchLayoutsExhaustive(decoderCosts(kSearchGpt3), 1536, a100Cluster(1024), LayoutSpace{});
    auto has = [&](const std::string& why) {
        return std::any_of(r.rejected.begin(), r.rejected.end(), [&](const RejectedLayout& x) { return x.why == why; });
    };
    EXPECT_TRUE(has("t=1024 does not divide 96 heads"));
    EXPECT_TRUE(has("p=64 does not divide 96 layers"));
    EXPECT_TRUE(has("d=1024 does not divide the global batch 1536"));
    const auto memory = std::find_if(r.rejected.begin(), r.rejected.end(), [](const RejectedLayout& x) { return x.memory_bytes > 0; });
    ASSERT_NE(memory, r.rejected.end());
    EXPECT_EQ(memory->why.rfind("memory ", 0), 0u) << memory->why;
    EXPECT_GT(memory->memory_bytes, 80 * test::kGiB);
    // No layout at all: a count that cannot split the batch or the model.
    try {
        searchLayoutsExhaustive(decoderCosts(kSearchGpt3), 1536, a100Cluster(1031), LayoutSpace{});
        FAIL() << "1031 devices were accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("no layout of 1031 devices can split gpt3-175b at batch 1536"), std::string::npos)
            << e.what();
    }
}

TEST(LayoutSearch, SplitsThatFitGiveEachRecomputationItsDevicesAndMemory) {
    // GPT-3 does not fit one A100: the planner proposes, per recomputation option, the fewest GPUs.
    const std::vector<LayoutEstimate> splits = splitsThatFit(decoderCosts(kSearchGpt3), 8, a100Cluster(1));
    ASSERT_EQ(splits.size(), 3u);
    for (const LayoutEstimate& e : splits) {
        printRow("split", e);
        EXPECT_TRUE(e.fits);
        EXPECT_EQ(e.layout.data, 1);
        EXPECT_LE(e.memoryBytes(), e.capacity_bytes);
        // The weights and Adam's state alone need 174.6e9 x 16 bytes over the devices.
        EXPECT_GE(e.layout.devices() * 80 * test::kGiB, 174.6e9 * 16);
    }
    EXPECT_EQ(splits[0].layout.recompute, Recompute::None);
    EXPECT_EQ(splits[2].layout.recompute, Recompute::Full);
    EXPECT_GE(splits[0].layout.devices(), splits[1].layout.devices());
    EXPECT_GE(splits[1].layout.devices(), splits[2].layout.devices());
}

TEST(LayoutSearch, OneEstimateTakesMicroseconds) {
    // Printed, not asserted (timing goals belong in benchmarks; docs/performance.md quotes it).
    const TransformerCosts c = decoderCosts(kSearchGpt3);
    const GpuCluster cluster = a100Cluster(1024);
    const std::vector<Layout> layouts = enumerateLayouts(c, 1536, cluster, LayoutSpace{});
    double sink = 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int rep = 0; rep < 5; ++rep)
        for (const Layout& l : layouts) sink += estimateLayout(c, 1536, cluster, l).step_s;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%zu layouts x 5: %.2f us per estimate (checksum %.3g)\n", layouts.size(), 1e6 * seconds / (5.0 * layouts.size()),
                sink);
    EXPECT_GT(sink, 0.0);
}

}  // namespace
}  // namespace trainbench::engine
