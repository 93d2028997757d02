// Strategies end to end through the real CLI: a mirrored run records its strategy, devices and
// replicas, a per-replica breakdown of every step, and shows and exports it; a bad strategy section
// is refused naming the key.
#include <gtest/gtest.h>

#include <fstream>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, const std::string& strategy) {
    const auto path = dir / (name + ".json");
    std::ofstream f(path);
    f << "{\"name\": \"" << name << "\", \"data\": {\"train_limit\": 2560, \"test_limit\": 500},"
      << "\"model\": {\"preset\": \"mlp\"},"
      << "\"train\": {\"batch_size\": 64, \"epochs\": 0, \"max_steps\": 20, \"eval_every_steps\": 0,"
      << " \"eval_at_epoch_end\": false}, \"strategy\": {" << strategy << "}}";
    return path.string();
}

}  // namespace

TEST(CliStrategy, MirroredRunRecordsEveryReplicasSteps) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "mirrored",
                                          "\"type\": \"mirrored\", \"replicas\": 2, \"threads_per_replica\": 1, "
                                          "\"batch_scope\": \"per_replica\", \"bucket_mb\": 0");
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("mirrored");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->strategy, "mirrored");
    EXPECT_EQ(row->devices, "cpu:1x2");
    EXPECT_EQ(row->replicas, 2);
    EXPECT_EQ(row->global_batch, 128) << "per_replica: 64 x 2";
    EXPECT_EQ(row->threads, 2);
    ASSERT_TRUE(row->comm_seconds);
    EXPECT_GT(*row->comm_seconds, 0.0);
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), 20u);
    for (const auto& s : steps) {
        EXPECT_EQ(s.samples, 128);
        EXPECT_GT(s.comm_seconds, 0.0);
    }
    const auto replicas = store.replicaSteps(row->id);
    ASSERT_EQ(replicas.size(), 40u);
    for (size_t i = 0; i < replicas.size(); ++i) {
        EXPECT_EQ(replicas[i].step, static_cast<int64_t>(i / 2 + 1));
        EXPECT_EQ(replicas[i].replica.rank, static_cast<int>(i % 2));
        EXPECT_EQ(replicas[i].replica.samples, 64);
        EXPECT_GT(replicas[i].replica.compute_seconds, 0.0);
    }

    auto show = runCli({"show", "mirrored", "--db", db}, tmp.path);
    ASSERT_EQ(show.exitCode, 0) << show.err;
    EXPECT_NE(show.out.find("mirrored, cpu:1x2"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("replicas (mirrored, cpu:1x2)"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("all-reduce"), std::string::npos) << show.out;

    auto csv = runCli({"export", "mirrored", "--db", db, "--csv", "--series", "replicas"}, tmp.path);
    ASSERT_EQ(csv.exitCode, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("step,rank,samples,compute_seconds,comm_seconds,wait_seconds,forward_seconds,"
                            "backward_seconds,optimizer_seconds,exposed_comm_seconds\n1,0,64,", 0), 0u) << csv.out;
    auto stepsCsv = runCli({"export", "mirrored", "--db", db, "--csv"}, tmp.path);
    EXPECT_NE(stepsCsv.out.find(",comm_seconds,wait_seconds,forward_seconds,"), std::string::npos)
        << stepsCsv.out.substr(0, 200);
}

TEST(CliStrategy, ReplicasNeedMirrored) {
    TempDir tmp;
    const std::string x = writeExperiment(tmp.path, "bad", "\"replicas\": 2");
    auto run = runCli({"validate", x}, tmp.path);
    EXPECT_NE(run.exitCode, 0);
    EXPECT_NE(run.err.find("strategy.replicas"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("'mirrored'"), std::string::npos) << run.err;
    auto typo = runCli({"validate", writeExperiment(tmp.path, "typo", "\"type\": \"mirored\"")}, tmp.path);
    EXPECT_NE(typo.exitCode, 0);
    EXPECT_NE(typo.err.find("strategy.type"), std::string::npos) << typo.err;
}
