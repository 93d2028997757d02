// End to end: runs on emulated devices train with the real numerics and record the virtual clock.
// The same experiment on a TPU slice gives the loss curve of the same global batch on the CPU, and
// the same virtual-time curve as any other run of it (tests/serial: under load); it is charged for
// its chips.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/emulatedruns.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
using namespace trainbench::testing::emulated;


TEST(CliEmulated, ATpuSliceTrainsTheSameNumbersAsTheCpuOnTheVirtualClock) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded cpu = runOne(tmp, db, "cpu", R"("strategy": {"type": "single"})");
    const Recorded pod = runOne(tmp, db, "pod", kSlice);
    ASSERT_EQ(cpu.steps.size(), 8u);
    ASSERT_EQ(pod.steps.size(), 8u);
    // The numerics: 32 cores of 8 examples each, gradients averaged, are the global batch's mean
    // gradient, so the losses are the CPU run's (to rounding: the sums run in another order).
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(pod.steps[i].loss, cpu.steps[i].loss, 1e-4) << "step " << i + 1;
    ASSERT_EQ(pod.evals.size(), cpu.evals.size());
    for (size_t i = 0; i < pod.evals.size(); ++i) EXPECT_NEAR(pod.evals[i].accuracy, cpu.evals[i].accuracy, 2e-3);

    EXPECT_EQ(pod.row.clock, "virtual");
    EXPECT_EQ(cpu.row.clock, "wall");
    EXPECT_EQ(pod.row.devices, "tpu-v3:v3-32");
    EXPECT_EQ(pod.row.strategy, "tpu_pod");
    EXPECT_EQ(pod.row.replicas.value_or(0), 32);
    EXPECT_EQ(pod.row.device_count.value_or(0), 16);  // chips: what Cloud TPU charges for
    // Static shapes: every step costs the same virtual time, and its parts add up to it.
    for (const profiler::StepSample& s : pod.steps) {
        EXPECT_DOUBLE_EQ(s.step_seconds, pod.steps.front().step_seconds);
        EXPECT_NEAR(s.input_seconds + s.forward_seconds + s.backward_seconds + s.optimizer_seconds +
                        s.exposed_comm_seconds + s.other_seconds, s.step_seconds, 1e-12);
        EXPECT_GT(s.comm_seconds, 0.0) << "32 cores exchange gradients";
        EXPECT_GE(s.other_seconds, 1e-3) << "the catalog's per-step overhead of a v3 (1 ms)";
    }
    EXPECT_NEAR(pod.row.train_seconds.value_or(0), 8 * pod.steps.front().step_seconds, 1e-9);
    ASSERT_TRUE(pod.row.host_seconds.has_value());
    EXPECT_GT(*pod.row.host_seconds, 0.0);
    // Charged: 16 chips at the catalog's $2.00 per chip-hour over training and evaluation.
    ASSERT_TRUE(pod.row.cost.has_value());
    const double billed = pod.row.train_seconds.value_or(0) + pod.row.eval_seconds.value_or(0);
    EXPECT_NEAR(*pod.row.cost, 16 * 2.00 * billed / 3600.0, 1e-12);
    // Its profile is the device's: op times on the virtual clock against one core's roofs.
    auto profile = runCli({"profile", "pod", "--db", db}, tmp.path);
    ASSERT_EQ(profile.exitCode, 0) << profile.err;
    EXPECT_NE(profile.out.find("ops on the virtual clock (roofs of one tpu-v3 core"), std::string::npos) << profile.out;
    EXPECT_NE(profile.out.find("memory (device: tpu-v3 core memory, 16.00 GiB)"), std::string::npos) << profile.out;
    // The CPU run is charged as this host at the catalog's price.
    EXPECT_EQ(cpu.row.device_type.value_or(""), "cpu-host");
    ASSERT_TRUE(cpu.row.cost.has_value());
    EXPECT_GT(*cpu.row.cost, 0.0);
}

TEST(CliEmulated, MirroredGpusExchangeOverNvSwitch) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded one = runOne(tmp, db, "one", R"("device": {"type": "a100-sxm4-40gb"})");
    const Recorded four = runOne(tmp, db, "four", R"("strategy": {"type": "mirrored", "replicas": 4},
      "device": {"type": "a100-sxm4-40gb"})");
    ASSERT_EQ(one.steps.size(), 8u);
    ASSERT_EQ(four.steps.size(), 8u);
    EXPECT_EQ(four.row.devices, "a100-sxm4-40gb:4");
    EXPECT_EQ(four.row.device_count.value_or(0), 4);
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(four.steps[i].loss, one.steps[i].loss, 1e-4) << "step " << i + 1;
    // A quarter of the batch each: less compute per step, plus a gradient all-reduce one GPU does not need.
    EXPECT_EQ(one.steps.front().comm_seconds, 0.0);
    EXPECT_GT(four.steps.front().comm_seconds, 0.0);
    EXPECT_LT(four.steps.front().forward_seconds, one.steps.front().forward_seconds);
}

// A pipeline of GPUs: each stage a GPU (charged), the stages' numerics on this host's threads; the
// virtual step is the schedule's, with the bubble as exposed communication, and each stage's record
// is its own. The loss curve is one GPU's.
TEST(CliEmulated, APipelineOfGpusRecordsEachStageAndTheBubble) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded one = runOne(tmp, db, "one", R"("device": {"type": "a100-sxm4-40gb"})");
    const Recorded pipe = runOne(tmp, db, "pipe", R"("strategy": {"type": "pipeline", "stages": 2, "micro_batches": 4},
      "device": {"type": "a100-sxm4-40gb"})");
    ASSERT_EQ(one.steps.size(), 8u);
    ASSERT_EQ(pipe.steps.size(), 8u);
    EXPECT_EQ(pipe.row.strategy, "pipeline");
    EXPECT_EQ(pipe.row.devices, "a100-sxm4-40gb:2");
    EXPECT_EQ(pipe.row.device_count.value_or(0), 2);
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(pipe.steps[i].loss, one.steps[i].loss, 1e-4) << "step " << i + 1;
    // Virtual time: the same every step (static shapes), the bubble exposed, each stage idle part of it.
    EXPECT_EQ(pipe.steps[3].step_seconds, pipe.steps[4].step_seconds);
    EXPECT_GT(pipe.steps.front().exposed_comm_seconds, 0.0);
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto stages = store.replicaSteps(pipe.row.id);
    ASSERT_EQ(stages.size(), 16u);
    for (size_t i = 0; i < stages.size(); ++i) {
        EXPECT_EQ(stages[i].replica.rank, static_cast<int>(i % 2));
        EXPECT_GT(stages[i].replica.compute_seconds, 0.0);
        EXPECT_GT(stages[i].replica.wait_seconds, 0.0) << "a stage idles in the bubble";
        EXPECT_LT(stages[i].replica.compute_seconds, pipe.steps[i / 2].step_seconds);
    }
    // Tensor parallelism on emulated devices is not modelled yet, and says so.
    const std::string tensor = writeFile(tmp.path / "tensor.json", experiment("tensor", R"("strategy": {"type": "tensor"},
      "device": {"type": "a100-sxm4-40gb"})"));
    auto refused = runCli({"run", tensor, "--db", db, "-q"}, tmp.path);
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE(refused.err.find("strategy.type 'tensor' trains on this host's CPU"), std::string::npos) << refused.err;
}

// Two 16384-wide layers at batch 65536 on one V100 (16 GiB): 4.5 GB of parameters, gradients and
// Adam state, and some 17 GB of activations. Nothing that size is allocated here.
// W1 at batch 256 (emulatedruns.h) fills between 90 and 100 % of this much memory.
constexpr double kSmallGpuGib = 0.0108;  // 11.6 MB: W1 needs 11.0 MB on one GPU, 9.1 MB on the fuller of 2 stages

const char* const kTooBigForOneV100 = R"({"name": "big",
      "model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 16384}, {"type": "relu"},
                           {"type": "dense", "units": 16384}, {"type": "relu"}, {"type": "dense", "units": 10}]},
      "data": {"train_limit": 65536, "test_limit": 100},
      "train": {"batch_size": 65536, "epochs": 0, "max_steps": 1},
      "device": {"type": "v100-sxm2-16gb"}})";

// A model whose activations do not fit one V100 fits cut into stages, each on its own V100 with its
// share of the layers and of the micro-batches in flight (estimate: nothing that size is allocated).
TEST(CliEmulated, AModelTooLargeForOneGpuFitsAsAPipelineOfThem) {
    TempDir tmp;
    const std::string file = writeFile(tmp.path / "big.json", kTooBigForOneV100);
    auto one = runCli({"estimate", file}, tmp.path);
    EXPECT_EQ(one.exitCode, 1) << one.out << one.err;
    EXPECT_NE(one.err.find("out of memory on v100-sxm2-16gb"), std::string::npos) << one.err;
    auto pipe = runCli({"estimate", file, "--json", "--set", "strategy.type=pipeline", "--set", "strategy.stages=2",
                        "--set", "strategy.micro_batches=32"},
                       tmp.path);
    ASSERT_EQ(pipe.exitCode, 0) << pipe.out << pipe.err;
    const auto rows = nlohmann::json::parse(pipe.out);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_TRUE(rows[0]["fits"].get<bool>());
    EXPECT_EQ(rows[0]["device_count"], 2);
    EXPECT_GT(rows[0]["step_seconds"].get<double>(), 0.0);
}

// What estimate proposes for a model that does not fit one V100 is true: each split fits with room
// when estimated as proposed, and one stage fewer (of the same kind) does not.
TEST(CliEmulated, TheSplitsProposedForAModelTooLargeForOneGpuFitAndAreTheFewest) {
    TempDir tmp;
    const std::string file = writeFile(tmp.path / "big.json", kTooBigForOneV100);
    auto one = runCli({"estimate", file}, tmp.path);
    EXPECT_EQ(one.exitCode, 1) << one.out << one.err;
    EXPECT_NE(one.err.find("as a pipeline across GPUs: 2 stages (strategy.type=pipeline, strategy.stages=2, "
                           "strategy.micro_batches=8)"),
              std::string::npos)
        << one.err;
    auto json = runCli({"estimate", file, "--json"}, tmp.path);
    EXPECT_EQ(json.exitCode, 1) << json.err;
    const auto splits = nlohmann::json::parse(json.out)[0]["splits"];
    ASSERT_FALSE(splits.empty()) << json.out;
    auto estimateWith = [&](int stages, int micro, bool recompute) {
        std::vector<std::string> args{"estimate", file, "--json", "--set", "strategy.type=pipeline",
                                      "--set", "strategy.stages=" + std::to_string(stages),
                                      "--set", "strategy.micro_batches=" + std::to_string(micro)};
        if (recompute) args.insert(args.end(), {"--set", "strategy.recompute=true"});
        auto r = runCli(args, tmp.path);
        EXPECT_NE(r.exitCode, 2) << r.err;
        return nlohmann::json::parse(r.out)[0];
    };
    for (const auto& s : splits) {
        const int stages = s["stages"];
        const auto row = estimateWith(stages, s["micro_batches"], s["recompute"]);
        EXPECT_TRUE(row["fits"].get<bool>()) << s.dump();
        EXPECT_LT(row["memory_fraction"].get<double>(), 0.9) << s.dump();
        EXPECT_NEAR(row["memory_bytes"].get<double>(), s["needed_bytes"].get<double>(), 1.0) << s.dump();
        EXPECT_EQ(row["device_count"], stages);
        if (stages > 2) {
            const auto fewer = estimateWith(stages - 1, s["micro_batches"], s["recompute"]);
            EXPECT_GE(fewer["memory_fraction"].get<double>(), 0.9) << s.dump();
        }
    }
}

TEST(CliEmulated, AModelThatDoesNotFitFailsLikeAnOutOfMemory) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string file = writeFile(tmp.path / "big.json", kTooBigForOneV100);
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("out of memory on v100-sxm2-16gb"), std::string::npos) << r.out << r.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto row = store.findRun("big");
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    EXPECT_NE(row->message.value_or("").find("activations"), std::string::npos) << row->message.value_or("");
    EXPECT_NE(row->message.value_or("").find("as a pipeline across GPUs: 2 stages"), std::string::npos)
        << row->message.value_or("");
}

// A user's catalog with one GPU that W1 at batch 256 fills to 90 % or more (a V100's figures, less
// memory): the run records the split that fits, the capacity verdict proposes it first, and the
// experiment changed as it says trains with room on each stage's GPU.
TEST(CliEmulated, AGpuNearCapacityIsProposedThePipelineSplitThatFits) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    std::ifstream in(std::string(TRAINBENCH_SOURCE_DIR) + "/resources/devices.json");
    nlohmann::json catalog = nlohmann::json::parse(in);
    nlohmann::json small;
    for (const auto& d : catalog["devices"])
        if (d["id"] == "v100-sxm2-16gb") small = d;
    ASSERT_FALSE(small.is_null());
    small["id"] = "small-gpu";
    small["memory"]["capacity_gib"] = kSmallGpuGib;
    catalog["devices"] = nlohmann::json::array({small});
    const std::string catalogFile = writeFile(tmp.path / "devices.json", catalog.dump());
    const std::string device = R"("device": {"type": "small-gpu", "catalog": ")" + catalogFile +
                               R"(", "infeed_seconds_per_batch": 0.0001})";
    const Recorded near = runOne(tmp, db, "near", device);
    ASSERT_FALSE(near.steps.empty());
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    std::string splits;
    double fraction = 0.0;
    for (const auto& [key, value] : store.attributes(near.row.id)) {
        if (key == "memory.splits") splits = value;
        if (key == "virtual.memory_fraction") fraction = std::stod(value);
    }
    EXPECT_GE(fraction, 0.9);
    EXPECT_LT(fraction, 1.0);
    ASSERT_FALSE(splits.empty());
    const auto v = store.verdict(near.row.id);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->verdict.kind, profiler::BoundKind::MemoryCapacity);
    ASSERT_FALSE(v->actions.empty());
    const profiler::Action& split = v->actions[0];
    EXPECT_EQ(split.title, "Split the model into 2 pipeline stages");
    std::vector<std::string> args{"run", writeFile(tmp.path / "split.json", experiment("split", device)), "--db", db,
                                  "-q"};
    for (const profiler::Change& c : split.changes)
        args.insert(args.end(), {"--set", c.key + "=" + (c.to.is_string() ? c.to.get<std::string>() : c.to.dump())});
    auto r = runCli(args, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto after = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = after.findRun("split");
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->devices, "small-gpu:2");
    for (const auto& [key, value] : after.attributes(row->id)) {
        if (key == "virtual.memory_fraction") {
            EXPECT_LT(std::stod(value), 0.9) << value;
        }
    }
}

TEST(CliEmulated, BadDeviceSectionsAreRejectedWithTheKeyPath) {
    TempDir tmp;
    auto check = [&](const std::string& body, const std::string& expected) {
        const std::string file = writeFile(tmp.path / "bad.json", experiment("bad", body));
        auto r = runCli({"validate", file}, tmp.path);
        EXPECT_NE(r.exitCode, 0) << body;
        EXPECT_NE((r.out + r.err).find(expected), std::string::npos) << r.out << r.err;
    };
    check(R"("device": {"type": "tpu-v9"})", "device.type");
    check(R"("strategy": {"type": "tpu_pod"}, "device": {"type": "tpu-v3"})", "strategy.slice: missing");
    check(R"("strategy": {"type": "tpu_pod", "slice": "v3-48"}, "device": {"type": "tpu-v3"})", "v3-48");
    check(R"("strategy": {"type": "tpu_pod", "slice": "v2-32"}, "device": {"type": "tpu-v3"})", "TPU v2 slice");
    check(R"("strategy": {"type": "tpu_pod", "slice": "v3-2048"}, "device": {"type": "tpu-v3"})", "train.batch_size");
    check(R"("strategy": {"type": "tpu_pod", "slice": "v3-8"}, "device": {"type": "v100-sxm2-16gb"})", "needs a TPU");
    // Replicas of an emulated device get equal shares of every batch: no smaller last batch.
    const std::string mirrored = writeFile(tmp.path / "mirrored.json", experiment("m", R"("strategy": {"type": "mirrored",
      "replicas": 2}, "device": {"type": "v100-sxm2-16gb"})"));
    auto r = runCli({"validate", mirrored, "--set", "data.drop_remainder=false"}, tmp.path);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("data.drop_remainder: must be true for 'mirrored' on an emulated device"),
              std::string::npos) << r.out << r.err;
}

TEST(CliEmulated, EstimateGivesTheVirtualStepOfARunWithoutTraining) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded pod = runOne(tmp, db, "pod", kSlice);
    ASSERT_FALSE(pod.steps.empty());
    const std::string file = (tmp.path / "pod.json").string();
    auto r = runCli({"estimate", file, "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_DOUBLE_EQ(rows[0]["step_seconds"].get<double>(), pod.steps.front().step_seconds);
    EXPECT_EQ(rows[0]["replicas"], 32);
    EXPECT_EQ(rows[0]["steps"], 8);  // train.max_steps
}

TEST(CliEmulated, EstimateOfResNet50AcrossSlices) {
    TempDir tmp;
    const std::string file = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/resnet50-imagenet-estimate.json";
    auto r = runCli({"estimate", file, "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), 5u);
    const std::vector<int> cores{8, 32, 128, 512, 2048};
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& p = rows[i];
        EXPECT_EQ(p["replicas"], cores[i]);
        EXPECT_EQ(p["device_count"], cores[i] / 2);  // chips
        EXPECT_EQ(p["replica_batch"], 128);
        EXPECT_TRUE(p["fits"].get<bool>());
        // 90 epochs of 1,281,167 images, the dataset repeated and the remainder dropped.
        EXPECT_EQ(p["steps"], 90LL * 1281167 / (128LL * cores[i]));
        // Charged: chips x $2.00 per chip-hour (the catalog's v3 price) over the training time.
        EXPECT_NEAR(p["cost"].get<double>(), cores[i] / 2 * 2.00 * p["train_seconds"].get<double>() / 3600, 1e-9);
        // The same per-core batch: throughput grows with the slice, the exchange is partly hidden.
        if (i > 0) {
            EXPECT_GT(p["samples_per_second"].get<double>(), rows[i - 1]["samples_per_second"].get<double>() * 3.5);
        }
        // Never better than linear, but for the last bucket's exchange, which a bigger torus can finish sooner.
        EXPECT_LE(p["scaling_efficiency"].get<double>(), 1.01);
    }
    // A per-core batch too large for a core's 16 GiB is reported like the device's out-of-memory.
    auto big = runCli({"estimate", file, "--set", "train.batch_size=1024"}, tmp.path);
    EXPECT_EQ(big.exitCode, 1) << big.out << big.err;
    EXPECT_NE(big.err.find("out of memory on tpu-v3 core"), std::string::npos) << big.err;
    EXPECT_NE(big.out.find("OOM"), std::string::npos) << big.out;
    // Nothing to train on: `run` says to estimate instead.
    auto run = runCli({"run", file, "--db", (tmp.path / "runs.db").string(), "--set", "sweep={}", "-q"}, tmp.path);
    EXPECT_NE(run.exitCode, 0);
    EXPECT_NE((run.out + run.err).find("trainbench-cli estimate"), std::string::npos) << run.out << run.err;
}

TEST(CliEmulated, ThisHostAsADeviceIsTimedByItsCalibrationInTheStore) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // Two mirrored replicas of one thread each: the host is calibrated at one thread (kernel rates,
    // shared-memory link) when the run starts, and the calibration is kept in the store.
    const Recorded host = runOne(tmp, db, "host", R"("strategy": {"type": "mirrored", "replicas": 2},
      "device": {"type": "cpu-host", "infeed_seconds_per_batch": 0.0001})");
    ASSERT_EQ(host.steps.size(), 8u);
    EXPECT_EQ(host.row.clock, "virtual");
    EXPECT_EQ(host.row.devices, "cpu-host:1x2");
    EXPECT_EQ(host.row.device_count, 1);
    for (const auto& s : host.steps) EXPECT_DOUBLE_EQ(s.step_seconds, host.steps.front().step_seconds);
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(h, "SELECT threads FROM host_models", -1, &q, nullptr);
    std::vector<int> threads;
    while (sqlite3_step(q) == SQLITE_ROW) threads.push_back(sqlite3_column_int(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
    EXPECT_EQ(threads, std::vector<int>{1});
    // The estimate reads the same calibration: the same step, without training.
    auto r = runCli({"estimate", (tmp.path / "host.json").string(), "--json", "--db", db}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    EXPECT_DOUBLE_EQ(rows[0]["step_seconds"].get<double>(), host.steps.front().step_seconds);
    EXPECT_GT(rows[0]["comm_seconds"].get<double>(), 0.0);
    EXPECT_EQ(rows[0]["devices"], "cpu-host:1x2");
    // The data set is in memory and its batches are prefetched (data.pipeline.prefetch's default, 2):
    // the pinned infeed, far shorter than the device's step, hides behind it.
    EXPECT_DOUBLE_EQ(rows[0]["input_seconds"].get<double>(), 0.0);
    // With prefetch 0 the trainer makes each batch between steps: the infeed is part of every step.
    auto inStep = runCli({"estimate", (tmp.path / "host.json").string(), "--json", "--db", db, "--set",
                          "data.pipeline.prefetch=0"},
                         tmp.path);
    ASSERT_EQ(inStep.exitCode, 0) << inStep.err << inStep.out;
    const auto charged = nlohmann::json::parse(inStep.out)[0];
    EXPECT_DOUBLE_EQ(charged["input_seconds"].get<double>(), 0.0001);
    EXPECT_NEAR(charged["step_seconds"].get<double>(), host.steps.front().step_seconds + 0.0001, 1e-12);
    // Unpinned, the estimate times this host's own pipeline and charges it the same way.
    auto own = runCli({"estimate", (tmp.path / "host.json").string(), "--json", "--db", db, "--set",
                       "device.infeed_seconds_per_batch=0", "--set", "data.pipeline.prefetch=0"},
                      tmp.path);
    ASSERT_EQ(own.exitCode, 0) << own.err << own.out;
    const auto measured = nlohmann::json::parse(own.out)[0];
    const double input = measured["input_seconds"].get<double>();
    EXPECT_GT(input, 0.0);
    EXPECT_NEAR(measured["step_seconds"].get<double>(), host.steps.front().step_seconds + input, 1e-12);
}
