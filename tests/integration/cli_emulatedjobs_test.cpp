// End to end: jobs of processes on emulated GPUs. The processes train for real (Gloo all-reduce,
// parameter servers), so the numerics are the CPU job's; each worker stands for one GPU on a host of
// its own, and the virtual clock charges the exchange over the hosts' network. The expected times
// are worked out here from the α-β formulas of docs/collectives-model.md and docs/devices.md.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/format/numberformat.h"
#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/emulatedruns.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
using namespace trainbench::testing::emulated;

namespace {

constexpr double kLatency = 10e-6;  // device.network_latency_us's default

std::map<std::string, std::string> attributesOf(const std::string& db, profiler::RunId id) {
    std::map<std::string, std::string> a;
    for (auto& [k, v] : profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).attributes(id)) a[k] = v;
    return a;
}

// The model's fp32 parameter bytes, from what the run recorded of its model.
double parameterBytes(const std::string& db, const Recorded& r) {
    return 4.0 * std::stod(attributesOf(db, r.row.id).at("plan.param_count"));
}

nlohmann::json estimateOf(const TempDir& tmp, const std::string& file, std::vector<std::string> sets = {}) {
    std::vector<std::string> args{"estimate", file, "--json"};
    for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
    auto r = runCli(args, tmp.path);
    EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
    return nlohmann::json::parse(r.out).at(0);
}

const char* kTwoWorkers = R"("strategy": {"type": "multi_worker", "replicas": 2, "threads_per_replica": 1})";
const char* kThreeWorkersOneServer = R"("strategy": {"type": "parameter_server", "replicas": 3, "parameter_servers": 1,
      "batch_scope": "per_replica", "threads_per_replica": 1})";
const char* kGpu = R"(, "device": {"type": "v100-sxm2-16gb", "infeed_seconds_per_batch": 0.0002)";

}  // namespace

TEST(CliEmulatedJobs, MultiWorkerOnGpusTrainsTheCpuJobsNumbersAndChargesARingOverTheNetwork) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded cpu = runOne(tmp, db, "cpu", kTwoWorkers);
    const Recorded gpus = runOne(tmp, db, "gpus", std::string(kTwoWorkers) + kGpu + "}");
    ASSERT_EQ(cpu.steps.size(), 8u);
    ASSERT_EQ(gpus.steps.size(), 8u);
    // The same processes computed the same numbers.
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(gpus.steps[i].loss, cpu.steps[i].loss, 1e-6 * cpu.steps[i].loss) << i;
    EXPECT_EQ(cpu.row.clock, "wall");
    EXPECT_EQ(gpus.row.clock, "virtual");
    EXPECT_EQ(gpus.row.strategy, "multi_worker");
    EXPECT_EQ(gpus.row.devices, "v100-sxm2-16gb:2");
    EXPECT_EQ(gpus.row.device_count.value_or(0), 2);
    EXPECT_EQ(gpus.row.replicas.value_or(0), 2);

    // The gradient all-reduce: a ring of 2 hosts over 100 Gbit/s links with 10 µs per message, per
    // bucket of b bytes 2(N-1)α + 2(N-1)/N·b·β. The buckets are the engine's (last layer first, one
    // closes once it holds 1 MiB): the MLP's 10 KB and 525 KB layers are short of 1 MiB, so its
    // 1.6 MB first layer joins them in one bucket. Then the step's records: 10 floats per rank.
    const double bytes = parameterBytes(db, gpus);
    ASSERT_EQ(bytes, 4.0 * ((256 * 10 + 10) + (512 * 256 + 256) + (784 * 512 + 512))) << "the MLP preset";
    const double beta = 8.0 / 100e9;
    auto ring = [&](double b) { return 2 * (2 - 1) * kLatency + 2.0 * (2 - 1) / 2 * b * beta; };
    const double records = ring(10 * 2 * 4);
    const double allReduce = ring(bytes) + records;

    const nlohmann::json estimate = estimateOf(tmp, (tmp.path / "gpus.json").string());
    EXPECT_EQ(estimate["devices"], "v100-sxm2-16gb:2");
    EXPECT_EQ(estimate["replica_batch"], 128);
    for (const profiler::StepSample& s : gpus.steps) {
        SCOPED_TRACE(s.step);
        EXPECT_DOUBLE_EQ(s.step_seconds, estimate["step_seconds"].get<double>());
        EXPECT_NEAR(s.comm_seconds, allReduce, 1e-12);
        EXPECT_NEAR(s.input_seconds + s.forward_seconds + s.backward_seconds + s.optimizer_seconds +
                        s.exposed_comm_seconds + s.other_seconds, s.step_seconds, 1e-12);
        EXPECT_GT(s.exposed_comm_seconds, records);  // the records come after the update: never hidden
        EXPECT_LE(s.exposed_comm_seconds, allReduce + 1e-12);
    }
    // Every rank's row is charged its device: half the batch, the whole all-reduce, nobody waiting.
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto ranks = store.replicaSteps(gpus.row.id);
    ASSERT_EQ(ranks.size(), 16u);
    for (const auto& r : ranks) {
        EXPECT_EQ(r.replica.samples, 128);
        EXPECT_NEAR(r.replica.comm_seconds, allReduce, 1e-12);
        EXPECT_EQ(r.replica.wait_seconds, 0.0);
    }
    // Two GPUs at the catalog's $3.06 per GPU-hour over training and evaluation.
    ASSERT_TRUE(gpus.row.cost.has_value());
    const double billed = gpus.row.train_seconds.value_or(0) + gpus.row.eval_seconds.value_or(0);
    EXPECT_NEAR(*gpus.row.cost, 2 * 3.06 * billed / 3600.0, 1e-12);
    EXPECT_NEAR(gpus.row.train_seconds.value_or(0), 8 * gpus.steps.front().step_seconds, 1e-12);
    // `show` tells the clock and the bill; a CPU run has neither line.
    const auto shown = runCli({"show", "gpus", "--db", db}, tmp.path);
    EXPECT_NE(shown.out.find("clock           virtual: v100-sxm2-16gb on 2 device(s)"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("cost            " + profiler::formatMoney(*gpus.row.cost) + " (2 device(s) at $3.06/h)"),
              std::string::npos)
        << shown.out;
    const auto cpuShown = runCli({"show", "cpu", "--db", db}, tmp.path);
    EXPECT_EQ(cpuShown.out.find("clock "), std::string::npos) << cpuShown.out;
}

TEST(CliEmulatedJobs, ParameterServerStepsFollowTheNetworkFormulaAndFlagSlowServers) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // Servers that apply updates at 100 TB/s: the update is negligible and the step is the network's.
    const Recorded fast = runOne(tmp, db, "fast", std::string(kThreeWorkersOneServer) + kGpu +
                                                      R"(, "ps_memory_gbs": 100000})");
    ASSERT_EQ(fast.steps.size(), 8u);
    const double bytes = parameterBytes(db, fast);
    EXPECT_EQ(fast.row.clock, "virtual");
    EXPECT_EQ(fast.row.devices, "v100-sxm2-16gb:3");
    EXPECT_EQ(fast.row.device_count.value_or(0), 3);

    // A worker's step: pull and push (α + P·β each) around the device's forward and backward of its
    // 256 examples and its per-step overhead — those from one V100 at batch 256 (a single-device
    // estimate of the same model).
    const nlohmann::json one = estimateOf(tmp, (tmp.path / "fast.json").string(),
                                          {"strategy.type=single", "strategy.replicas=1", "device.ps_memory_gbs=20"});
    const double transfer = kLatency + bytes * 8.0 / 100e9;
    const double worker = one["forward_seconds"].get<double>() + one["backward_seconds"].get<double>() +
                          one["overhead_seconds"].get<double>() + 2 * transfer;
    // 3 workers on 1 server at 100 Gbit/s: each round the server's link carries 3·P each way, less
    // than a worker's step, so the workers bound it; 3 steps per round.
    ASSERT_LT(3 * bytes * 8.0 / 100e9, worker);
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    for (const profiler::StepSample& s : fast.steps) {
        EXPECT_NEAR(s.step_seconds, worker / 3, 1e-6) << s.step;  // the update: 28 bytes x P/4 at 100 TB/s
        EXPECT_NEAR(s.comm_seconds, 2 * transfer, 1e-12) << s.step;
        EXPECT_EQ(s.wait_seconds, 0.0) << s.step;
        EXPECT_NEAR(s.wall_seconds, static_cast<double>(s.step) * s.step_seconds, 1e-9) << s.step;
    }
    EXPECT_EQ(attributesOf(db, fast.row.id).at("virtual.ps_bound"), "workers");
    EXPECT_DOUBLE_EQ(estimateOf(tmp, (tmp.path / "fast.json").string())["step_seconds"].get<double>(),
                     fast.steps.front().step_seconds);

    // At 0.1 Gbit/s a transfer takes ~0.17 s; the server's link carries three of them per round
    // each way, against a worker's two: the servers are the bottleneck and the rounds are theirs.
    const std::string slowFile = (tmp.path / "fast.json").string();
    auto r = runCli({"run", slowFile, "--db", db, "--set", "name=slow", "--set", "device.network_gbps=0.1"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE((r.out + r.err).find("the parameter servers are the bottleneck"), std::string::npos) << r.out << r.err;
    const auto row = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).findRun("slow");
    ASSERT_TRUE(row);
    const auto steps = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).steps(row->id);
    ASSERT_EQ(steps.size(), 8u);
    const double slowTransfer = bytes * 8.0 / 0.1e9;
    const double round = 3 * slowTransfer;
    const auto workers = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).replicaSteps(row->id);
    ASSERT_EQ(workers.size(), 8u) << "one worker per step";
    for (size_t i = 0; i < steps.size(); ++i) {
        SCOPED_TRACE(steps[i].step);
        EXPECT_NEAR(steps[i].step_seconds, round / 3, 1e-12);
        EXPECT_NEAR(steps[i].comm_seconds, 2 * (kLatency + slowTransfer), 1e-12);
        // The worker waits for the servers what its own step leaves of the round.
        const engine::ReplicaStep& w = workers[i].replica;
        const double own = w.compute_seconds + w.comm_seconds + w.optimizer_seconds + 3 * steps[i].other_seconds +
                           3 * steps[i].input_seconds;
        EXPECT_NEAR(w.wait_seconds, round - own, 1e-9);
        EXPECT_GT(w.wait_seconds, 0.1);
        EXPECT_EQ(w.samples, 256);
    }
    const auto a = attributesOf(db, row->id);
    EXPECT_EQ(a.at("virtual.ps_bound"), "server links");
    EXPECT_EQ(a.at("ps.updates"), "8");
    auto show = runCli({"show", "slow", "--db", db}, tmp.path);
    EXPECT_NE(show.out.find("bound by        server links"), std::string::npos) << show.out;
    // The verdict sees the exchange; its first action is a faster network.
    auto profile = runCli({"profile", "slow", "--db", db}, tmp.path);
    EXPECT_NE(profile.out.find("verdict: communication-bound"), std::string::npos) << profile.out;
    EXPECT_NE(profile.out.find("1. Four times the network bandwidth between hosts\n       device.network_gbps: 0.1 -> 0.4"),
              std::string::npos) << profile.out;
}

TEST(CliEmulatedJobs, BadCombinationsAreRejectedWithTheKeyPath) {
    TempDir tmp;
    auto check = [&](const std::string& body, const std::string& expected) {
        const std::string file = writeFile(tmp.path / "bad.json", experiment("bad", body));
        auto r = runCli({"validate", file}, tmp.path);
        EXPECT_NE(r.exitCode, 0) << body;
        EXPECT_NE((r.out + r.err).find(expected), std::string::npos) << r.out << r.err;
    };
    check(R"("strategy": {"type": "multi_worker", "replicas": 2}, "device": {"type": "tpu-v3"})",
          "strategy.type: is 'multi_worker' but device.type is a TPU: TPUs train with 'tpu_pod'");
    check(R"("strategy": {"type": "parameter_server", "replicas": 2}, "device": {"type": "tpu-v4"})",
          "strategy.type: is 'parameter_server' but device.type is a TPU");
    check(R"("strategy": {"type": "multi_worker", "replicas": 3}, "device": {"type": "a100-sxm4-40gb"})",
          "train.batch_size: is 256: it does not split evenly over the 3 workers");
    check(R"("strategy": {"type": "multi_worker", "replicas": 2}, "device": {"network_gbps": 10})",
          "device.network_gbps: is 10 but only 'multi_worker' and 'parameter_server' on an emulated device use it");
    check(R"("strategy": {"type": "mirrored", "replicas": 2}, "device": {"type": "a100-sxm4-40gb", "network_latency_us": 2})",
          "device.network_latency_us: is 2");
    check(R"("strategy": {"type": "multi_worker", "replicas": 2}, "device": {"type": "a100-sxm4-40gb", "ps_memory_gbs": 5})",
          "device.ps_memory_gbs: is 5 but only 'parameter_server'");
    check(R"("strategy": {"type": "multi_worker", "replicas": 2}, "device": {"type": "a100-sxm4-40gb", "network_gbps": 0})",
          "device.network_gbps");
    const std::string file = writeFile(tmp.path / "mw.json", experiment("mw", R"("strategy": {"type": "multi_worker",
      "replicas": 2}, "device": {"type": "a100-sxm4-40gb"})"));
    auto r = runCli({"validate", file, "--set", "data.drop_remainder=false"}, tmp.path);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("data.drop_remainder: must be true for 'multi_worker' on an emulated device"),
              std::string::npos) << r.out << r.err;
}
