// The profiler end to end through the real CLI: a run records its step breakdown, per-op statistics
// with FLOPs and bytes from the shapes, the machine's roofs, its memory footprint, hardware counters
// (or why not) and a verdict; `profile` shows them; `--trace` writes a Chrome trace of the window.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
using trainbench::testing::writeExperiment;

namespace {

std::map<std::string, std::string> attributesOf(profiler::RunStore& store, profiler::RunId id) {
    std::map<std::string, std::string> m;
    for (auto& [k, v] : store.attributes(id)) m.emplace(k, v);
    return m;
}

nlohmann::json readJson(const std::filesystem::path& p) {
    std::ifstream f(p);
    return nlohmann::json::parse(f);
}

}  // namespace

TEST(CliProfile, ARunRecordsItsBreakdownOpsRoofsMemoryAndVerdict) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "w1", 128, 40, "", /*evalEvery=*/20);
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    EXPECT_NE(run.out.find("verdict: "), std::string::npos) << run.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("w1");
    ASSERT_TRUE(row);
    ASSERT_TRUE(row->verdict) << "the run is classified when it ends";

    // The phases add up to the step, and every step ran forward, backward and the optimizer.
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), 40u);
    double evalAfter = 0.0;
    for (const auto& s : steps) {
        const double parts = s.input_seconds + s.forward_seconds + s.backward_seconds + s.optimizer_seconds +
                             s.exposed_comm_seconds + s.other_seconds;
        EXPECT_NEAR(parts, s.step_seconds, 1e-9 + 1e-6 * s.step_seconds) << "step " << s.step;
        EXPECT_GT(s.forward_seconds, 0.0) << "step " << s.step;
        EXPECT_GT(s.backward_seconds, 0.0) << "step " << s.step;
        EXPECT_GT(s.optimizer_seconds, 0.0) << "step " << s.step;
        EXPECT_EQ(s.exposed_comm_seconds, 0.0) << "one device exchanges nothing";
        EXPECT_EQ(s.checkpoint_seconds, 0.0);
        if (s.step == 21) {
            evalAfter = s.eval_seconds;
        } else {
            EXPECT_EQ(s.eval_seconds, 0.0) << "step " << s.step;
        }
    }
    EXPECT_GT(evalAfter, 0.0) << "the evaluation after step 20 is recorded with step 21";

    // Per-op statistics: every Dense primitive once per step of the steps the verdict counts (the
    // first min(20, 40 / 10) = 4 are warm-up, where a primitive's first call sets it up), FLOPs and
    // bytes from the shapes.
    std::map<std::string, engine::prof::OpRow> ops;
    for (const auto& r : store.opStats(row->id)) ops[r.op.kind + " | " + r.op.shape] = r.op;
    const auto first = ops.find("inner_product_forward | src 128x784, weights 512x784, dst 128x512, relu");
    ASSERT_NE(first, ops.end()) << "op rows: " << ops.size();
    EXPECT_EQ(first->second.calls, 36);
    EXPECT_DOUBLE_EQ(first->second.flops, 2.0 * 128 * 784 * 512 + 2.0 * 128 * 512);  // GEMM, bias, ReLU
    EXPECT_DOUBLE_EQ(first->second.bytes, 4.0 * (128 * 784 + 512 * 784 + 512 + 128 * 512));
    EXPECT_GT(first->second.seconds, 0.0);
    const auto bwdW = ops.find("inner_product_backward_weights | src 128x784, weights 512x784, dst 128x512");
    ASSERT_NE(bwdW, ops.end());
    EXPECT_EQ(bwdW->second.calls, 36);
    EXPECT_EQ(ops.count("inner_product_backward_data | src 128x784, weights 512x784, dst 128x512"), 0u)
        << "the first layer computes no input gradient";
    const auto adam = ops.find("adam_update | 401920 parameters");
    ASSERT_NE(adam, ops.end());
    EXPECT_EQ(adam->second.calls, 36);
    EXPECT_DOUBLE_EQ(adam->second.bytes, 28.0 * 401920);
    for (const auto& [key, op] : ops) EXPECT_EQ(op.calls, 36) << key << ": evaluation ops are not counted";

    // Roofs of this host and thread count, the footprint, and the counters or why there are none.
    const profiler::ProfileInput in = store.profileInput(row->id);
    ASSERT_TRUE(in.roofs);
    EXPECT_GT(in.roofs->peak_gflops, 0.0);
    EXPECT_GT(in.roofs->bandwidth_gbs, 0.0);
    EXPECT_EQ(in.roofs->threads, 1);
    ASSERT_TRUE(in.memory);
    EXPECT_DOUBLE_EQ(in.memory->params_bytes, 4.0 * 535818);
    EXPECT_DOUBLE_EQ(in.memory->optimizer_bytes, 8.0 * 535818);
    EXPECT_GT(in.memory->activation_bytes, 4.0 * 128 * (512 + 256 + 10));
    EXPECT_GT(in.memory->peak_rss_bytes, 0.0);
    EXPECT_EQ(in.memory->device_source, "host RAM");
    const auto attrs = attributesOf(store, row->id);
    ASSERT_EQ(attrs.count("ops.first_step"), 1u);
    EXPECT_EQ(attrs.at("ops.first_step"), "5");
    EXPECT_EQ(in.ops_first_step, 5);
    ASSERT_EQ(attrs.count("hw.available"), 1u);
    if (attrs.at("hw.available") == "true") EXPECT_GT(std::stod(attrs.at("hw.cycles")), 0.0);
    else EXPECT_NE(attrs.at("hw.unavailable_reason").find("perf_event_open"), std::string::npos);

    const auto verdict = store.verdict(row->id);
    ASSERT_TRUE(verdict);
    EXPECT_FALSE(verdict->verdict.summary.empty());
    EXPECT_FALSE(verdict->verdict.evidence.empty());

    auto profile = runCli({"profile", "w1", "--db", db}, tmp.path);
    ASSERT_EQ(profile.exitCode, 0) << profile.err;
    for (const char* part : {"step time", "forward", "ops, steps 5-40 (roofs at 1 thread(s)", "inner_product_forward", "memory",
                             "verdict: ", "hardware counters"})
        EXPECT_NE(profile.out.find(part), std::string::npos) << part << " missing in:\n" << profile.out;
}

// The roofs are cached per host and thread count. When a run's ops outrun the cached peak (the
// machine was loaded when it was measured, or a VM got faster), they are measured again before the
// run is classified, so that no verdict reads "at 300 % of peak".
TEST(CliProfile, RoofsThatARunOutranAreMeasuredAgain) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "w1", 128, 40, "", /*evalEvery=*/0);
    ASSERT_EQ(runCli({"run", x, "--db", db, "-q", "--set", "train.threads=1"}, tmp.path).exitCode, 0);
    auto exec = [&](const std::string& sql) {
        sqlite3* h = nullptr;
        ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
        sqlite3_close(h);
    };
    auto peak = [&]() {
        sqlite3* h = nullptr;
        sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
        sqlite3_stmt* q = nullptr;
        sqlite3_prepare_v2(h, "SELECT peak_gflops, measured_at FROM machines WHERE threads = 1", -1, &q, nullptr);
        std::pair<double, std::string> out{0.0, ""};
        if (sqlite3_step(q) == SQLITE_ROW)
            out = {sqlite3_column_double(q, 0), reinterpret_cast<const char*>(sqlite3_column_text(q, 1))};
        sqlite3_finalize(q);
        sqlite3_close(h);
        return out;
    };
    const auto measured = peak();
    ASSERT_GT(measured.first, 1.0) << "the first run measured the roofs";
    // An old measurement far below what a matrix product runs at here.
    exec("UPDATE machines SET peak_gflops = 1, measured_at = '2020-01-01T00:00:00.000Z' WHERE threads = 1");

    auto second = runCli({"run", x, "--db", db, "--set", "train.threads=1", "--set", "name=again"}, tmp.path);
    ASSERT_EQ(second.exitCode, 0) << second.err << second.out;
    const std::string said = second.out + second.err;
    EXPECT_NE(said.find("above the peak of 1 GFLOP/s measured 2020-01-01T00:00:00.000Z: measuring the roofs again"),
              std::string::npos)
        << said;
    const auto now = peak();
    EXPECT_GT(now.first, 1.0);
    EXPECT_NE(now.second, "2020-01-01T00:00:00.000Z");

    // A cached peak the run did not outrun is kept as it is.
    exec("UPDATE machines SET peak_gflops = 100000 WHERE threads = 1");
    auto third = runCli({"run", x, "--db", db, "--set", "train.threads=1", "--set", "name=third"}, tmp.path);
    ASSERT_EQ(third.exitCode, 0);
    EXPECT_EQ((third.out + third.err).find("measuring the roofs again"), std::string::npos);
    EXPECT_EQ(peak().first, 100000.0);
}

TEST(CliProfile, ADeviceMemoryLimitIsTheFootprintsYardstick) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "small-device", 64, 5, "");
    auto run = runCli({"run", x, "--db", db, "-q", "--set", "device.memory_mb=4"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("small-device");
    ASSERT_TRUE(row);
    const profiler::ProfileInput in = store.profileInput(row->id);
    ASSERT_TRUE(in.memory);
    EXPECT_EQ(in.memory->device_source, "device.memory_mb");
    EXPECT_DOUBLE_EQ(in.memory->device_bytes, 4.0 * 1024 * 1024);
    // 8.6 MB of parameters, gradients and Adam state on a 4 MiB device.
    EXPECT_EQ(row->verdict, "memory_capacity (high)");
    const auto v = store.verdict(row->id);
    ASSERT_TRUE(v);
    ASSERT_FALSE(v->actions.empty());
    bool halves = false;
    for (const auto& a : v->actions)
        for (const auto& c : a.changes) halves = halves || (c.key == "train.batch_size" && c.to == 32);
    EXPECT_TRUE(halves) << "a capacity-bound run is offered half the batch";
}

TEST(CliProfile, MirroredReplicasRecordTheirOwnPhases) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "mirrored", 128, 15,
                                          "\"type\": \"mirrored\", \"replicas\": 2, \"threads_per_replica\": 1");
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("mirrored");
    ASSERT_TRUE(row);
    const auto replicas = store.replicaSteps(row->id);
    ASSERT_EQ(replicas.size(), 30u);
    for (const auto& r : replicas) {
        EXPECT_GT(r.replica.forward_seconds, 0.0) << "step " << r.step << " rank " << r.replica.rank;
        EXPECT_GT(r.replica.backward_seconds, 0.0);
        EXPECT_GT(r.replica.optimizer_seconds, 0.0);
        // Blocked on the exchange is part of the step, never more than it.
        EXPECT_LE(r.replica.exposed_comm_seconds, r.replica.compute_seconds + r.replica.wait_seconds + 1.0);
    }
    // Both replicas' ops, summed: each primitive ran twice per step, over the 14 steps after the one
    // of warm-up (min(20, 15 / 10)).
    for (const auto& r : store.opStats(row->id)) EXPECT_EQ(r.op.calls, 28) << r.op.kind << " " << r.op.shape;
}

TEST(CliProfile, TraceHoldsTheWindowsStepsWithTheirPhasesAndOps) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "traced", 64, 12, "");
    const auto trace = tmp.path / "trace.json";
    auto run = runCli({"run", x, "--db", db, "-q", "--trace", trace.string(), "--trace-steps", "4:6"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    const nlohmann::json t = readJson(trace);
    ASSERT_TRUE(t["traceEvents"].is_array());
    std::vector<std::pair<double, double>> stepSpans;
    std::vector<int64_t> stepNumbers;
    int ops = 0, phases = 0;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] != "X") continue;
        if (e["cat"] == "step") {
            stepNumbers.push_back(e["args"]["step"].get<int64_t>());
            stepSpans.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
        }
        ops += e["cat"] == "op";
        phases += e["cat"] == "phase";
    }
    EXPECT_EQ(stepNumbers, (std::vector<int64_t>{4, 5, 6}));
    EXPECT_GE(ops, 3 * 8) << "three Dense layers' primitives and updates per step";
    EXPECT_GE(phases, 3 * 4);
    // Every op lies within one of the traced steps.
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] != "X" || e["cat"] != "op") continue;
        const double b = e["ts"].get<double>(), end = b + e["dur"].get<double>();
        bool inside = false;
        for (auto [s, f] : stepSpans) inside = inside || (b >= s && end <= f);
        EXPECT_TRUE(inside) << e.dump();
    }
    auto bad = runCli({"run", x, "--db", db, "-q", "--trace", trace.string(), "--trace-steps", "6:4"}, tmp.path);
    EXPECT_EQ(bad.exitCode, 2) << bad.out;
    EXPECT_NE(bad.err.find("FIRST:LAST"), std::string::npos) << bad.err;
}

TEST(CliProfile, AMultiWorkerJobsTraceHasEveryRank) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "mw", 64, 10, "\"type\": \"multi_worker\", \"replicas\": 2");
    const auto trace = tmp.path / "job.json";
    auto run = runCli({"run", x, "--db", db, "-q", "--trace", trace.string(), "--trace-steps", "3:4"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    EXPECT_FALSE(std::filesystem::exists(trace.string() + ".rank0")) << "the ranks' files are merged and removed";
    const nlohmann::json t = readJson(trace);
    std::map<int, int> stepsPerPid;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == "step") ++stepsPerPid[e["pid"].get<int>()];
    EXPECT_EQ(stepsPerPid.size(), 2u) << "one process per rank";
    for (auto [pid, n] : stepsPerPid) EXPECT_EQ(n, 2) << "pid " << pid;
}
