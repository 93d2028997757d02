// The shipped experiments that are, by construction, each kind of bound (experiments/*.json): a
// short version of each gets the verdict its description promises, action 1 is the intended fix,
// and `apply --action 1 --run` makes a run with more steady-state throughput (runs.throughput,
// after the first 20 steps) or, for memory capacity, a footprint that fits. Margins are generous;
// this executable runs serially (RUN_SERIAL) so that its runs have the cores to themselves, runs
// measured while other processes used a core are repeated, and a quiet run with the wrong verdict
// gets one more run (experimentcheck.h).
#include <gtest/gtest.h>

#include <thread>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/verdicts/experimentcheck.h"

using namespace trainbench;
using profiler::BoundKind;
using trainbench::testing::ExperimentCheck;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

constexpr double kFaster = 1.15;

// The verdicts and speed-ups are about optimised code: an unoptimised, instrumented build (the dev
// preset, Debug with ASan) shifts every op's speed and would test the build, not the experiment.
#ifdef NDEBUG
#define SKIP_UNLESS_OPTIMISED() (void)0
#else
#define SKIP_UNLESS_OPTIMISED() GTEST_SKIP() << "performance verdicts need an optimised build (the release preset)"
#endif

// Fashion-MNIST converted into dir/name as scripts/prepare-io-data.sh lays it out, with fewer
// examples: `layout` is "tfrecord" (16 shards) or "files" (one example per file).
std::filesystem::path convert(const TempDir& tmp, const std::string& layout, int examples) {
    const auto out = tmp.path / layout;
    std::vector<std::string> args{"convert", "--from", "fashion-mnist", "--to", layout, "--limit",
                                  std::to_string(examples), out.string()};
    if (layout == "tfrecord") args.insert(args.end() - 1, {"--shards", "16"});
    const auto r = runCli(args, tmp.path);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return out;
}

}  // namespace

TEST(ShippedExperiments, ComputeBoundUsesTheIdleCores) {
    SKIP_UNLESS_OPTIMISED();
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (cores < 2) GTEST_SKIP() << "one core: there is no idle core to propose";
    TempDir tmp;
    // 80 steps of 32 on one thread (about 0.1 to 0.4 s each by the machine): 60 after warm-up.
    ExperimentCheck check(tmp.path, "compute-bound", {"train.max_steps=80", "train.batch_size=32"});
    if (!check.runUntilVerdict(BoundKind::Compute, {{"train.threads", cores}})) return;
    if (!check.applyAction1()) return;
    check.expectFaster(kFaster);
}

TEST(ShippedExperiments, MemoryBandwidthBoundDoublesTheBatch) {
    SKIP_UNLESS_OPTIMISED();
    TempDir tmp;
    // Steps of about 20 ms at batch 4: 100 after warm-up.
    ExperimentCheck check(tmp.path, "memory-bound-bandwidth", {"train.max_steps=120"});
    if (!check.runUntilVerdict(BoundKind::MemoryBandwidth, {{"train.batch_size", 8}})) return;
    if (!check.applyAction1()) return;
    check.expectFaster(kFaster);
}

TEST(ShippedExperiments, MemoryCapacityBoundHalvesTheBatchAndThenFits) {
    SKIP_UNLESS_OPTIMISED();
    TempDir tmp;
    // The footprint is computed from shapes: a few steps say all there is.
    ExperimentCheck check(tmp.path, "memory-bound-capacity", {"train.max_steps=3"});
    check.ignoreLoad();
    if (!check.runUntilVerdict(BoundKind::MemoryCapacity, {{"train.batch_size", 2048}})) return;
    if (!check.applyAction1()) return;
    auto store = profiler::RunStore::open(check.db(), profiler::OpenMode::ReadOnly);
    const auto before = store.profileInput(check.base().row.id).memory;
    const auto after = store.profileInput(check.applied().row.id).memory;
    ASSERT_TRUE(before && after);
    EXPECT_EQ(after->device_source, "device.memory_mb");
    EXPECT_LT(after->activation_bytes, 0.55 * before->activation_bytes) << "activations scale with the batch";
    EXPECT_LT(after->modelBytes(), 0.9 * after->device_bytes) << "the footprint is below the 90 % line";
    EXPECT_NE(check.verdict(check.applied()).verdict.kind, BoundKind::MemoryCapacity) << check.profile(check.applied());
    std::printf("[ smaller  ] memory-bound-capacity: %.1f MB -> %.1f MB by shapes of the device's %.1f MB\n",
                before->modelBytes() / 1e6, after->modelBytes() / 1e6, after->device_bytes / 1e6);
}

TEST(ShippedExperiments, CommunicationBoundDoublesTheBatch) {
    SKIP_UNLESS_OPTIMISED();
    TempDir tmp;
    // Two worker processes, steps of about 10 ms: 180 after warm-up.
    ExperimentCheck check(tmp.path, "comm-bound", {"train.max_steps=200"});
    if (!check.runUntilVerdict(BoundKind::Communication, {{"train.batch_size", 32}})) return;
    if (!check.applyAction1()) return;
    check.expectFaster(kFaster);
}

TEST(ShippedExperiments, InputBoundWithoutPrefetchReadsInParallel) {
    SKIP_UNLESS_OPTIMISED();
    TempDir tmp;
    const auto shards = convert(tmp, "tfrecord", 16000);
    ASSERT_FALSE(HasFailure());
    // Steps of about 20 ms, most of it waiting for the emulated disk: 100 after warm-up. Prefetching
    // alone would hide only the few milliseconds of compute; 8 readers overlap the disk's latency.
    ExperimentCheck check(tmp.path, "io-bound-no-prefetch",
                          {"data.train_files=" + (shards / "train-*.tfrecord").string(),
                           "data.test_files=" + (shards / "test-*.tfrecord").string(), "train.max_steps=120"});
    if (!check.runUntilVerdict(BoundKind::Input, {{"data.pipeline.parallel_reads", true},
                                                  {"data.pipeline.cycle_length", 8}}))
        return;
    if (!check.applyAction1()) return;
    check.expectFaster(kFaster);
}

TEST(ShippedExperiments, InputBoundOnSmallFilesReadsInParallel) {
    SKIP_UNLESS_OPTIMISED();
    TempDir tmp;
    const auto files = convert(tmp, "files", 1000);
    ASSERT_FALSE(HasFailure());
    // Each example is a file costing 30 ms on the emulated object store: a batch of 4 (not 32)
    // keeps the run short, 10 steps after warm-up, and input still most of the step.
    ExperimentCheck check(tmp.path, "io-bound-small-files",
                          {"data.train_files=" + (files / "train-files").string(),
                           "data.test_files=" + (files / "test-files").string(), "train.batch_size=4",
                           "train.max_steps=30"});
    if (!check.runUntilVerdict(BoundKind::Input, {{"data.pipeline.parallel_reads", true},
                                                  {"data.pipeline.cycle_length", 8}}))
        return;
    if (!check.applyAction1()) return;
    check.expectFaster(kFaster);
}
