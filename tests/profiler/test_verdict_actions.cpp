// The ranked actions: concrete changes of documented experiment keys, in range, from the run's
// values, best first, with the expected effect where it can be estimated.
#include <gtest/gtest.h>

#include <algorithm>

#include "profiler/verdict/experimentkeys.h"
#include "verdicttestutil.h"

namespace trainbench::profiler {
namespace {

using json = nlohmann::json;
using testutil::loadFixture;
using testutil::opAt;
using testutil::roofs;
using testutil::runWithInputFraction;
using testutil::uniformRun;

const Action* findAction(const Verdict& v, const std::string& key) {
    for (const Action& a : v.actions)
        for (const Change& c : a.changes)
            if (c.key == key) return &a;
    return nullptr;
}

size_t rankOf(const Verdict& v, const std::string& key) {
    for (size_t i = 0; i < v.actions.size(); ++i)
        for (const Change& c : v.actions[i].changes)
            if (c.key == key) return i;
    return v.actions.size();
}

// What every action list must hold: `from` is the run's value, `to` a documented value, the
// changes apply, and the ones that are no change come last.
void expectRunnable(const Verdict& v, const ProfileInput& in) {
    const ExperimentView view(in.experiment);
    bool textOnlySeen = false;
    for (const Action& a : v.actions) {
        EXPECT_FALSE(a.title.empty());
        EXPECT_FALSE(a.expected.empty()) << a.title;
        EXPECT_FALSE(a.rationale.empty()) << a.title;
        if (a.changes.empty()) {
            textOnlySeen = true;
            EXPECT_NE(a.title.find("no experiment change"), std::string::npos) << a.title;
            continue;
        }
        EXPECT_FALSE(textOnlySeen) << a.title << " ranks after an action that is no change";
        for (const Change& c : a.changes) {
            EXPECT_EQ(c.from, view.at(c.key)) << c.key;
            const auto& keys = actionKeys();
            const auto key = std::find_if(keys.begin(), keys.end(), [&](const ActionKey& k) { return k.key == c.key; });
            ASSERT_NE(key, keys.end()) << c.key;
            EXPECT_TRUE(withinRange(*key, c.to)) << c.key << " -> " << c.to.dump();
        }
        const json applied = applyChanges(in.experiment, a.changes);
        for (const Change& c : a.changes) EXPECT_EQ(ExperimentView(applied).at(c.key), c.to) << c.key;
        if (a.expected_speedup) {
            EXPECT_GE(*a.expected_speedup, 1.0) << a.title;
        }
    }
}

TEST(VerdictActions, InputBoundWithoutPrefetchPrefetchesFirst) {
    const ProfileInput in = loadFixture("io_bound_small_files");
    const Verdict v = classify(in);
    ASSERT_FALSE(v.actions.empty());
    const Action& first = v.actions.front();
    EXPECT_EQ(first.addresses, BoundKind::Input);
    ASSERT_EQ(first.changes.size(), 1u);
    EXPECT_EQ(first.changes[0].key, "data.pipeline.prefetch");
    EXPECT_EQ(first.changes[0].from, json(0));
    EXPECT_EQ(first.changes[0].to, json(2));
    // 25 % input, overlapped with the other 75 %: a step takes 75 % of its time, x1.33.
    ASSERT_TRUE(first.expected_speedup.has_value());
    EXPECT_NEAR(*first.expected_speedup, 1.0 / 0.75, 0.02);
    expectRunnable(v, in);
}

TEST(VerdictActions, SmallFilesGetParallelReadsAndConversionToShards) {
    const ProfileInput in = loadFixture("io_bound_small_files");
    const Verdict v = classify(in);
    const Action* reads = findAction(v, "data.pipeline.parallel_reads");
    ASSERT_NE(reads, nullptr);
    ASSERT_EQ(reads->changes.size(), 2u);
    EXPECT_EQ(reads->changes[1].key, "data.pipeline.cycle_length");
    EXPECT_EQ(reads->changes[1].from, json(1));
    EXPECT_EQ(reads->changes[1].to, json(8));

    const Action* convert = findAction(v, "data.dataset");
    ASSERT_NE(convert, nullptr);
    EXPECT_EQ(convert->changes[0].from, json("example_files"));
    EXPECT_EQ(convert->changes[0].to, json("tfrecord"));
    EXPECT_EQ(convert->changes[1].to, json("/home/me/trainbench/data/fashion-mnist-files/tfrecord/train-*.tfrecord"));
    EXPECT_NE(convert->expected.find("trainbench-cli convert --from example_files --input "
                                     "/home/me/trainbench/data/fashion-mnist-files/train-files --split train --to "
                                     "tfrecord --shards 16 /home/me/trainbench/data/fashion-mnist-files/tfrecord"),
              std::string::npos)
        << convert->expected;
    // It needs a command run first, so the one-click changes rank before it.
    EXPECT_LT(rankOf(v, "data.pipeline.prefetch"), rankOf(v, "data.dataset"));
    EXPECT_LT(rankOf(v, "data.pipeline.parallel_reads"), rankOf(v, "data.dataset"));
    // Reducing the batch is domain.md's "not ideal": after every concrete pipeline change.
    const size_t batch = rankOf(v, "train.batch_size");
    ASSERT_LT(batch, v.actions.size());
    EXPECT_NE(v.actions[batch].title.find("not ideal"), std::string::npos);
    EXPECT_GT(batch, rankOf(v, "data.pipeline.autotune"));
    EXPECT_EQ(v.actions[batch].changes[0].to, json(16));
}

TEST(VerdictActions, InputThatIsMostOfTheStepReadsInParallelBeforePrefetching) {
    // 90 % input (one small file after another on slow storage): prefetching overlaps it with the
    // other 10 % only, x1.11; 8 files read at once cut it to an eighth, x4.7 at most.
    ProfileInput in = runWithInputFraction(0.90);
    in.experiment["data"]["pipeline"] = {{"prefetch", 0}, {"cycle_length", 1}, {"parallel_reads", false},
                                         {"map_parallel_calls", 1}};
    in.threads = 2;
    const Verdict v = classify(in);
    ASSERT_EQ(v.verdict.kind, BoundKind::Input);
    ASSERT_GE(v.actions.size(), 3u);
    EXPECT_EQ(v.actions[0].changes[0].key, "data.pipeline.parallel_reads");
    EXPECT_NEAR(*v.actions[0].expected_speedup, 1.0 / (0.10 + 0.90 / 8), 1e-9);
    EXPECT_EQ(v.actions[1].changes[0].key, "data.pipeline.map_parallel_calls");
    EXPECT_EQ(v.actions[2].changes[0].key, "data.pipeline.prefetch");
    EXPECT_NEAR(*v.actions[2].expected_speedup, 1.0 / 0.90, 1e-9);
    expectRunnable(v, in);
}

TEST(VerdictActions, InMemoryIdxDataGetsNoPipelineChanges) {
    ProfileInput in = runWithInputFraction(0.25);
    in.experiment["data"] = {{"dataset", "fashion-mnist"}};
    const Verdict v = classify(in);
    EXPECT_EQ(findAction(v, "data.pipeline.prefetch"), nullptr) << "prefetched already (the default, 2)";
    EXPECT_EQ(findAction(v, "data.pipeline.parallel_reads"), nullptr);
    EXPECT_EQ(findAction(v, "data.pipeline.map_parallel_calls"), nullptr);
    EXPECT_EQ(findAction(v, "data.pipeline.cache"), nullptr);
    expectRunnable(v, in);
}

TEST(VerdictActions, InMemoryIdxDataWithoutPrefetchIsToldToPrefetch) {
    ProfileInput in = runWithInputFraction(0.25);
    in.experiment["data"] = {{"dataset", "fashion-mnist"}, {"pipeline", {{"prefetch", 0}}}};
    const Verdict v = classify(in);
    ASSERT_EQ(rankOf(v, "data.pipeline.prefetch"), 0u);
    const Action& first = v.actions.front();
    EXPECT_EQ(first.changes[0].to, json(2));
    ASSERT_TRUE(first.expected_speedup.has_value());
    // The batch is made while the rest of the step (75 %) computes: step / max(rest, input).
    EXPECT_NEAR(*first.expected_speedup, 1.0 / 0.75, 1e-9);
    EXPECT_EQ(findAction(v, "data.pipeline.parallel_reads"), nullptr);
    EXPECT_EQ(findAction(v, "data.pipeline.map_parallel_calls"), nullptr);
    expectRunnable(v, in);
}

TEST(VerdictActions, AutotunedPipelinesGetNoExplicitPipelineValues) {
    ProfileInput in = runWithInputFraction(0.25);
    in.experiment["data"]["pipeline"] = {{"autotune", true}, {"prefetch", 0}};
    const Verdict v = classify(in);
    EXPECT_EQ(findAction(v, "data.pipeline.prefetch"), nullptr);
    EXPECT_EQ(findAction(v, "data.pipeline.map_parallel_calls"), nullptr);
}

TEST(VerdictActions, CommunicationWithoutOverlapOverlapsFirst) {
    const ProfileInput in = loadFixture("mirrored_comm");
    const Verdict v = classify(in);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(v.actions[0].changes[0].key, "strategy.overlap");
    EXPECT_EQ(v.actions[0].changes[0].from, json(false));
    EXPECT_EQ(v.actions[0].changes[0].to, json(true));
    ASSERT_TRUE(v.actions[0].expected_speedup.has_value());
    EXPECT_GT(*v.actions[0].expected_speedup, 1.1);

    const Action* batch = findAction(v, "train.batch_size");
    ASSERT_NE(batch, nullptr);
    EXPECT_EQ(batch->changes[0].to, json(512));
    // The exchange stays, the compute doubles: 2S / (2S - X) with X / S = the comm fraction.
    const double x = v.verdict.evidence[0].value / 100.0;
    ASSERT_EQ(v.verdict.evidence[0].name, "comm_fraction");
    EXPECT_NEAR(*batch->expected_speedup, 2.0 / (2.0 - x), 1e-9);

    const Action* replicas = findAction(v, "strategy.replicas");
    ASSERT_NE(replicas, nullptr);
    EXPECT_EQ(replicas->changes[0].to, json(1));
    const size_t async = rankOf(v, "strategy.type");
    ASSERT_LT(async, v.actions.size());
    EXPECT_NE(v.actions[async].title.find("not ideal"), std::string::npos);
    EXPECT_GT(async, rankOf(v, "strategy.replicas"));
    expectRunnable(v, in);
}

TEST(VerdictActions, NoActionTakesAKeyOutOfItsRange) {
    ProfileInput in = testutil::runWithCommFraction(0.30);
    in.experiment["train"]["batch_size"] = 65536;  // the documented maximum: no doubling
    const Verdict v = classify(in);
    EXPECT_EQ(findAction(v, "train.batch_size"), nullptr);
    expectRunnable(v, in);
}

TEST(VerdictActions, CapacityHalvesTheBatchAndNeverRaisesIt) {
    ProfileInput in = testutil::runWithCommFraction(0.30);  // communication would double the batch
    MemoryFootprint m;
    m.device_bytes = 1e9;
    m.params_bytes = m.grads_bytes = 1e8;
    m.optimizer_bytes = 2e8;
    m.activation_bytes = 5.5e8;  // 95 % in all
    m.device_source = "device.memory_mb";
    in.memory = m;
    const Verdict v = classify(in);
    ASSERT_EQ(v.verdict.kind, BoundKind::MemoryCapacity);
    const Action* batch = findAction(v, "train.batch_size");
    ASSERT_NE(batch, nullptr);
    EXPECT_EQ(batch->changes[0].to, json(64));
    EXPECT_NE(batch->expected.find("about 675.0 MB"), std::string::npos) << batch->expected;  // 950 - 550 / 2
    for (const Action& a : v.actions) {
        for (const Change& c : a.changes) {
            if (c.key == "train.batch_size") {
                EXPECT_LT(c.to.get<int>(), 128) << a.title;
            }
        }
    }
    ASSERT_FALSE(v.actions.empty());
    EXPECT_TRUE(v.actions.back().changes.empty());
    expectRunnable(v, in);
}

// One emulated GPU near capacity with the pipeline splits the run recorded: the split that needs the
// fewest GPUs comes first, as changes that make it, with the memory its fullest GPU would hold.
TEST(VerdictActions, CapacityOnOneGpuProposesThePipelineSplitsThatFit) {
    ProfileInput in = runWithInputFraction(0.0);
    in.experiment["device"]["type"] = "v100-sxm2-16gb";
    MemoryFootprint m;
    m.device_bytes = 16e9;
    m.params_bytes = m.grads_bytes = 1e9;
    m.optimizer_bytes = 2e9;
    m.activation_bytes = 11e9;  // 94 %
    m.device_source = "v100-sxm2-16gb memory";
    m.splits = {{2, 8, false, 8e9, 16e9, 5.5e9}, {3, 12, true, 4e9, 16e9, 1e9}};
    in.memory = m;
    const Verdict v = classify(in);
    ASSERT_EQ(v.verdict.kind, BoundKind::MemoryCapacity);
    ASSERT_GE(v.actions.size(), 2u);
    const Action& split = v.actions[0];
    EXPECT_EQ(split.title, "Split the model into 2 pipeline stages");
    ASSERT_EQ(split.changes.size(), 2u);  // strategy.stages is 2 by default already
    EXPECT_EQ(split.changes[0].key, "strategy.type");
    EXPECT_EQ(split.changes[0].to, json("pipeline"));
    EXPECT_EQ(split.changes[1].key, "strategy.micro_batches");
    EXPECT_EQ(split.changes[1].to, json(8));
    EXPECT_NE(split.expected.find("about 8000.0 MB on the fullest (50.0 % of one GPU's 16000.0 MB"), std::string::npos)
        << split.expected;
    EXPECT_NE(split.expected.find("2 GPUs are charged instead of 1"), std::string::npos) << split.expected;
    EXPECT_NE(split.expected.find("idles about 11.1 %"), std::string::npos) << split.expected;  // 1/9
    const Action& recompute = v.actions[1];
    EXPECT_EQ(recompute.title, "Split the model into 3 pipeline stages with recomputation");
    EXPECT_EQ(recompute.changes.back().key, "strategy.recompute");
    EXPECT_EQ(recompute.changes.back().to, json(true));
    expectRunnable(v, in);

    // A pipeline run of 2 stages offered recomputation at its own stage count: that one change.
    in.experiment["strategy"] = {{"type", "pipeline"}, {"stages", 2}, {"micro_batches", 8}};
    in.memory->splits = {{2, 8, true, 6e9, 16e9, 1e9}};
    const Verdict p = classify(in);
    ASSERT_FALSE(p.actions.empty());
    EXPECT_EQ(p.actions[0].title, "Recompute activations in each stage");
    ASSERT_EQ(p.actions[0].changes.size(), 1u);
    EXPECT_EQ(p.actions[0].changes[0].key, "strategy.recompute");
    EXPECT_EQ(p.actions[0].expected.find("charged instead"), std::string::npos) << p.actions[0].expected;
    expectRunnable(p, in);

    // Without recorded splits (a CPU host's RAM), no pipeline is proposed.
    in.memory->splits.clear();
    EXPECT_EQ(findAction(classify(in), "strategy.recompute"), nullptr);
}

TEST(VerdictActions, ComputeBoundOnIdleCoresUsesThemFirst) {
    ProfileInput in = runWithInputFraction(0.0);
    in.roofs = roofs();
    in.ops = {opAt("conv", 9.0, 20.0, 3.0)};
    in.experiment["train"]["threads"] = 1;
    in.threads = 1;
    in.host_cores = 4;
    Verdict v = classify(in);
    ASSERT_EQ(v.verdict.kind, BoundKind::Compute);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(v.actions[0].changes[0].key, "train.threads");
    EXPECT_EQ(v.actions[0].changes[0].to, json(4));
    EXPECT_NEAR(*v.actions[0].expected_speedup, 4.0, 1e-9);  // all of the step is compute phases
    EXPECT_TRUE(v.actions.back().changes.empty());           // faster hardware: no change, last
    expectRunnable(v, in);

    // On an emulated device the virtual clock sets the time: this host's threads would not change it.
    in.experiment["device"]["type"] = "tpu-v3";
    v = classify(in);
    EXPECT_EQ(findAction(v, "train.threads"), nullptr);
    in.experiment.erase("device");

    in.host_cores = 0;  // unknown: no thread advice
    v = classify(in);
    EXPECT_EQ(findAction(v, "train.threads"), nullptr);
}

TEST(VerdictActions, MemoryBandwidthDoublesTheBatch) {
    ProfileInput in = runWithInputFraction(0.0);
    in.roofs = roofs();
    in.ops = {opAt("eltwise", 8.0, 0.25, 7.0), opAt("matmul", 2.0, 40.0, 1.5)};
    const Verdict v = classify(in);
    ASSERT_EQ(v.verdict.kind, BoundKind::MemoryBandwidth);
    ASSERT_FALSE(v.actions.empty());
    EXPECT_EQ(v.actions[0].changes[0].key, "train.batch_size");
    EXPECT_EQ(v.actions[0].changes[0].to, json(256));
    // 80 % of the step in ops left of the ridge, at best halved: 1 / (1 - 0.4).
    EXPECT_NEAR(*v.actions[0].expected_speedup, 1.0 / 0.6, 1e-9);
    expectRunnable(v, in);
}

}  // namespace
}  // namespace trainbench::profiler
