// End to end: runs on emulated devices train with the real numerics and record the virtual clock.
// The same experiment on a TPU slice gives the loss curve of the same global batch on the CPU, and
// the same virtual-time curve whether or not the host is busy; it is charged for its chips.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

std::string writeFile(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path.string();
}

// W1 on 4096 examples, global batch 256, 8 steps; the device section is appended.
std::string experiment(const std::string& name, const std::string& strategyAndDevice) {
    return R"({"name": ")" + name + R"(", "model": {"preset": "mlp"},
      "data": {"train_limit": 4096, "test_limit": 1000, "drop_remainder": true, "shuffle": true},
      "train": {"batch_size": 256, "epochs": 0, "max_steps": 8, "eval_every_steps": 4, "threads": 2},
      )" + strategyAndDevice + "}";
}

struct Recorded {
    profiler::RunRow row;
    std::vector<engine::StepRecord> steps;
    std::vector<engine::EvalRecord> evals;
};

Recorded runOne(const TempDir& tmp, const std::string& db, const std::string& name, const std::string& body) {
    const std::string file = writeFile(tmp.path / (name + ".json"), experiment(name, body));
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto row = store.findRun(name);
    EXPECT_TRUE(row.has_value()) << name;
    if (!row) return {};
    return {*row, store.steps(row->id), store.evals(row->id)};
}

const char* kSlice = R"("strategy": {"type": "tpu_pod", "slice": "v3-32"},
      "device": {"type": "tpu-v3", "infeed_seconds_per_batch": 0.0002})";

}  // namespace

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
    for (const engine::StepRecord& s : pod.steps) {
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
    // The CPU run is charged as this host at the catalog's price.
    EXPECT_EQ(cpu.row.device_type.value_or(""), "cpu-host");
    ASSERT_TRUE(cpu.row.cost.has_value());
    EXPECT_GT(*cpu.row.cost, 0.0);
}

TEST(CliEmulated, VirtualTimeDoesNotDependOnTheHostsLoad) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded quiet = runOne(tmp, db, "quiet", kSlice);
    // Two threads spinning on this machine's cores while the same experiment runs again.
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    for (int i = 0; i < 2; ++i)
        load.emplace_back([&] {
            volatile double x = 1;
            while (!stop) x = x * 1.0000001 + 1e-9;
        });
    const Recorded busy = runOne(tmp, db, "busy", kSlice);
    stop = true;
    for (auto& t : load) t.join();
    ASSERT_EQ(quiet.steps.size(), busy.steps.size());
    for (size_t i = 0; i < quiet.steps.size(); ++i) {
        EXPECT_EQ(quiet.steps[i].step_seconds, busy.steps[i].step_seconds);
        EXPECT_EQ(quiet.steps[i].wall_seconds, busy.steps[i].wall_seconds);
    }
    for (size_t i = 0; i < quiet.evals.size() && i < busy.evals.size(); ++i)
        EXPECT_EQ(quiet.evals[i].wall_seconds, busy.evals[i].wall_seconds);
}

TEST(CliEmulated, AModelThatDoesNotFitFailsLikeAnOutOfMemory) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // Two 16384-wide layers at batch 65536 on one V100 (16 GiB): 4.5 GB of parameters, gradients and
    // Adam state, and some 17 GB of activations. Nothing that size is allocated here.
    const std::string file = writeFile(tmp.path / "big.json", R"({"name": "big",
      "model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 16384}, {"type": "relu"},
                           {"type": "dense", "units": 16384}, {"type": "relu"}, {"type": "dense", "units": 10}]},
      "data": {"train_limit": 65536, "test_limit": 100},
      "train": {"batch_size": 65536, "epochs": 0, "max_steps": 1},
      "device": {"type": "v100-sxm2-16gb"}})");
    auto r = runCli({"run", file, "--db", db, "-q"}, tmp.path);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("out of memory on v100-sxm2-16gb"), std::string::npos) << r.out << r.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto row = store.findRun("big");
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    EXPECT_NE(row->message.value_or("").find("activations"), std::string::npos) << row->message.value_or("");
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
}
