// strategy "pipeline" end to end on Fashion-MNIST: `trainbench-cli run` trains W1's MLP cut into
// stages on threads; its loss curve is one device's on the same global batch, the run records each
// stage's step breakdown and its verdict speaks of the pipeline; malformed pipeline keys and an
// TPU device are refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::followsOneDevice;
using trainbench::testing::TempDir;
using trainbench::testing::writeExperiment;

TEST(CliPipeline, FollowsOneDevicesLossCurveAndRecordsEveryStage) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();  // one store: one device trains once
    for (const char* schedule : {"gpipe", "1f1b"}) {
        const std::string name = std::string("pipe-") + schedule;
        // Every stage sees the whole batch.
        const auto run = followsOneDevice(tmp, db, name,
                                          std::string("\"type\": \"pipeline\", \"stages\": 2, \"micro_batches\": 4, "
                                                      "\"schedule\": \"") + schedule + "\"",
                                          2, 64);
        ASSERT_TRUE(run) << schedule;
        EXPECT_NE(run->err.find("pipeline on cpu:1x2"), std::string::npos) << run->err;
        EXPECT_EQ(run->row.strategy, "pipeline");
        EXPECT_EQ(run->row.devices, "cpu:1x2");
        // The profile reads the run back: the pipeline's own verdict words, never "gradient exchange"
        // as its summary.
        auto profile = runCli({"profile", name, "--db", db}, tmp.path);
        ASSERT_EQ(profile.exitCode, 0) << profile.err;
        EXPECT_EQ(profile.out.find("Communication-bound: "), std::string::npos) << profile.out;
    }
}

// The trace's pipeline timeline: each stage's thread holds one block per micro-batch's forward and
// backward, in 1F1B's order (PipeDream-Flush: K-k-1 forwards to warm up, then one forward and one
// backward in turn, then the remaining backwards), and a block starts only after the block it needs
// from the neighbouring stage has ended.
TEST(CliPipeline, TheTraceDrawsEachStagesMicroBatchesInTheSchedulesOrder) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const auto trace = tmp.path / "trace.json";
    const std::string x = writeExperiment(tmp.path, "traced", 64, 6,
                                          "\"type\": \"pipeline\", \"stages\": 2, \"micro_batches\": 4, "
                                          "\"schedule\": \"1f1b\"");
    auto run = runCli({"run", x, "--db", db, "-q", "--trace", trace.string(), "--trace-steps", "4:5"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    std::ifstream in(trace);
    const nlohmann::json t = nlohmann::json::parse(in);
    struct Block {
        bool forward;
        int micro;
        double begin, end;
    };
    std::map<int64_t, std::string> threadNames;
    std::map<int64_t, std::vector<Block>> byThread;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name") threadNames[e["tid"]] = e["args"]["name"];
        if (e["ph"] != "X" || e["cat"] != "stage" || e["name"] == "recompute micro-batch") continue;
        const double b = e["ts"].get<double>();
        byThread[e["tid"]].push_back(
            {e["name"] == "forward micro-batch", static_cast<int>(e["args"]["value"].get<double>()), b, b + e["dur"].get<double>()});
    }
    ASSERT_EQ(byThread.size(), 2u) << "one timeline per stage";
    std::vector<Block> stage[2];
    for (auto& [tid, blocks] : byThread) {
        std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.begin < b.begin; });
        stage[threadNames[tid] == "tb-stage1" ? 1 : 0] = blocks;
    }
    ASSERT_FALSE(stage[0].empty());
    ASSERT_FALSE(stage[1].empty());
    auto order = [](const std::vector<Block>& blocks) {
        std::string s;
        for (const Block& b : blocks) s += (b.forward ? "F" : "B") + std::to_string(b.micro) + " ";
        return s;
    };
    // Two steps traced.
    EXPECT_EQ(order(stage[0]), "F0 F1 B0 F2 B1 F3 B2 B3 F0 F1 B0 F2 B1 F3 B2 B3 ");
    EXPECT_EQ(order(stage[1]), "F0 B0 F1 B1 F2 B2 F3 B3 F0 B0 F1 B1 F2 B2 F3 B3 ");
    // The n-th forward of a micro-batch on stage 1 after stage 0's; its backward on stage 0 after stage 1's.
    auto nth = [](const std::vector<Block>& blocks, bool forward, int micro, int n) -> const Block* {
        for (const Block& b : blocks)
            if (b.forward == forward && b.micro == micro && n-- == 0) return &b;
        return nullptr;
    };
    for (int n = 0; n < 2; ++n) {
        for (int m = 0; m < 4; ++m) {
            const Block* f0 = nth(stage[0], true, m, n);
            const Block* f1 = nth(stage[1], true, m, n);
            const Block* b0 = nth(stage[0], false, m, n);
            const Block* b1 = nth(stage[1], false, m, n);
            ASSERT_TRUE(f0 && f1 && b0 && b1) << "step " << n << " micro-batch " << m;
            EXPECT_GE(f1->begin, f0->end) << "F" << m;
            EXPECT_GE(b0->begin, b1->end) << "B" << m;
        }
    }
}

TEST(CliPipeline, MalformedKeysAndEmulatedDevicesAreRefusedNamingTheKey) {
    TempDir tmp;
    const std::string x = writeExperiment(tmp.path, "pipe", 64, 5, "\"type\": \"pipeline\", \"stages\": 3");
    auto bad = runCli({"run", x, "--set", "strategy.stage_boundaries=2;4"}, tmp.path);
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("strategy.stage_boundaries: is \"2;4\", not comma-separated layer indices"), std::string::npos)
        << bad.err;
    auto count = runCli({"run", x, "--set", "strategy.stage_boundaries=2"}, tmp.path);
    EXPECT_EQ(count.exitCode, 2);
    EXPECT_NE(count.err.find("strategy.stage_boundaries: names 1 boundaries but 3 stages need 2"), std::string::npos)
        << count.err;
    auto order = runCli({"run", x, "--db", (tmp.path / "r.db").string(), "--set", "strategy.stage_boundaries=3,2"}, tmp.path);
    EXPECT_NE(order.exitCode, 0);
    EXPECT_NE(order.err.find("strategy.stage_boundaries[1]: 2 must be after 3"), std::string::npos) << order.err;
    auto tpu = runCli({"run", x, "--db", (tmp.path / "r.db").string(), "--set", "device.type=tpu-v3", "--set",
                       "data.drop_remainder=true"},
                      tmp.path);
    EXPECT_NE(tpu.exitCode, 0);
    EXPECT_NE(tpu.err.find("an emulated pipeline puts its stages on GPUs"), std::string::npos) << tpu.err;
    auto replicated = runCli({"run", x, "--set", "strategy.replicas=2"}, tmp.path);
    EXPECT_EQ(replicated.exitCode, 2);
    EXPECT_NE(replicated.err.find("strategy.replicas: is 2 but a pipeline run trains one replica here"), std::string::npos)
        << replicated.err;
    auto notPipeline = runCli({"run", writeExperiment(tmp.path, "m", 64, 5, "\"type\": \"mirrored\", \"micro_batches\": 8")},
                              tmp.path);
    EXPECT_EQ(notPipeline.exitCode, 2);
    EXPECT_NE(notPipeline.err.find("they are 'pipeline' keys"), std::string::npos) << notPipeline.err;
}
