// The input pipeline end to end through the real CLI: convert Fashion-MNIST to TFRecord shards and
// to one file per example, train from them, and find the input wait and per-stage figures in the
// run store; corrupt data fails the run naming the file and byte offset.
#include <gtest/gtest.h>

#include <fstream>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// A small experiment over converted data; `extra` lines go into "data".
std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, const std::string& data,
                            int maxSteps) {
    const auto path = dir / (name + ".json");
    std::ofstream f(path);
    f << "{\"name\": \"" << name << "\", \"data\": {" << data << "},"
      << "\"model\": {\"preset\": \"logreg\"}, \"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1},"
      << "\"train\": {\"batch_size\": 32, \"epochs\": 0, \"max_steps\": " << maxSteps
      << ", \"eval_every_steps\": 0, \"eval_at_epoch_end\": false, \"threads\": 1}}";
    return path.string();
}

}  // namespace

TEST(CliInput, ConvertToShardsThenTrainRecordsStagesAndAttributes) {
    TempDir tmp;
    const auto shards = tmp.path / "shards";
    auto conv = runCli({"convert", "--from", "fashion-mnist", "--to", "tfrecord", "--shards", "4", "--limit", "2000",
                        shards.string()},
                       tmp.path);
    ASSERT_EQ(conv.exitCode, 0) << conv.err;
    EXPECT_NE(conv.out.find("train: 2000 examples -> 4 TFRecord shard(s)"), std::string::npos) << conv.out;
    EXPECT_NE(conv.out.find("test: 2000 examples -> 4 TFRecord shard(s)"), std::string::npos) << conv.out;
    for (const char* f : {"train-00000-of-00004.tfrecord", "train-00003-of-00004.tfrecord", "test-00003-of-00004.tfrecord"})
        EXPECT_TRUE(std::filesystem::exists(shards / f)) << f;
    // Balanced: 500 equal-sized examples per shard.
    EXPECT_EQ(std::filesystem::file_size(shards / "train-00000-of-00004.tfrecord"),
              std::filesystem::file_size(shards / "train-00003-of-00004.tfrecord"));

    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(
        tmp.path, "from-shards",
        "\"dataset\": \"tfrecord\", \"train_files\": \"shards/train-*.tfrecord\", \"test_files\": \"shards/test-*.tfrecord\","
        "\"pipeline\": {\"cycle_length\": 4, \"parallel_reads\": true, \"map_parallel_calls\": 2, \"prefetch\": 3}",
        30);
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("from-shards");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->steps, 30);
    ASSERT_TRUE(row->input_seconds);
    const auto stages = store.inputStages(row->id);
    EXPECT_EQ(stages.size(), 30u * 5u) << "read, map, shuffle, batch and prefetch for every step";
    int64_t delivered = 0;
    for (const auto& s : stages)
        if (s.stage.stage == "prefetch") delivered += s.stage.items;
    EXPECT_EQ(delivered, 30);
    const auto attributes = store.attributes(row->id);
    auto value = [&](const std::string& key) {
        for (const auto& [k, v] : attributes)
            if (k == key) return v;
        return std::string("<missing>");
    };
    EXPECT_EQ(value("input.cycle_length"), "4");
    EXPECT_EQ(value("input.prefetch"), "3");
    EXPECT_EQ(value("storage.preset"), "local");

    auto show = runCli({"show", "from-shards", "--db", db}, tmp.path);
    EXPECT_NE(show.out.find("input wait"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("MEAN QUEUE FILL"), std::string::npos) << show.out;
    auto csv = runCli({"export", "from-shards", "--db", db, "--csv", "--series", "input"}, tmp.path);
    EXPECT_EQ(csv.out.rfind("step,stage,seconds,items,bytes,fill\n1,", 0), 0u) << csv.out.substr(0, 200);
}

TEST(CliInput, SmallFilesOnSlowStorageAreInputBound) {
    TempDir tmp;
    auto conv = runCli({"convert", "--from", "fashion-mnist", "--to", "files", "--limit", "400",
                        (tmp.path / "files").string()},
                       tmp.path);
    ASSERT_EQ(conv.exitCode, 0) << conv.err;
    EXPECT_TRUE(std::filesystem::exists(tmp.path / "files/train-files/00000399.example"));
    const std::string db = (tmp.path / "runs.db").string();
    // 3 ms per open and no prefetch: each step waits about 32 x 3 ms for its files; logreg's
    // compute is well under a millisecond.
    const std::string x = writeExperiment(
        tmp.path, "small-files",
        "\"dataset\": \"example_files\", \"train_files\": \"files/train-files\", \"test_files\": \"files/test-files\","
        "\"pipeline\": {\"prefetch\": 0, \"shuffle_buffer\": 8}, \"storage\": {\"open_latency_ms\": 3}",
        10);
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("small-files");
    ASSERT_TRUE(row && row->input_seconds && row->train_seconds);
    EXPECT_GT(*row->input_seconds / *row->train_seconds, 0.5);
    EXPECT_GE(*row->input_seconds, 10 * 32 * 0.003 * 0.9) << "at least the emulated open latency";
    EXPECT_FALSE(row->final_accuracy) << "the run never evaluated: no accuracy, rather than 0 %";
}

TEST(CliInput, CorruptShardFailsTheRunNamingFileAndOffset) {
    TempDir tmp;
    const auto shards = tmp.path / "shards";
    ASSERT_EQ(runCli({"convert", "--to", "tfrecord", "--shards", "1", "--limit", "300", shards.string()}, tmp.path).exitCode, 0);
    const auto shard = shards / "train-00000-of-00001.tfrecord";
    // Corrupt the data of record 200: records are equal-sized.
    const auto size = std::filesystem::file_size(shard);
    const auto recordSize = size / 300;
    {
        std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(200 * recordSize + 12 + 100));
        f.put('\x7f');
    }
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(
        tmp.path, "corrupt",
        "\"dataset\": \"tfrecord\", \"train_files\": \"shards/train-*.tfrecord\", \"test_files\": \"shards/test-*.tfrecord\","
        "\"shuffle\": false",
        20);
    auto run = runCli({"run", x, "--db", db, "-q"}, tmp.path);
    EXPECT_EQ(run.exitCode, 1) << run.err << run.out;
    const std::string where = shard.string() + ": corrupted record at byte offset " + std::to_string(200 * recordSize);
    EXPECT_NE(run.err.find(where), std::string::npos) << run.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("corrupt");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Failed);
    EXPECT_EQ(store.steps(row->id).size(), 6u) << "the 6 full batches before record 200 are kept";

    // With skip_corrupt the run completes and reports the skipped record.
    auto skip = runCli({"run", x, "--db", db, "-q", "--set", "data.pipeline.skip_corrupt=true", "--set", "train.epochs=1",
                        "--set", "train.max_steps=0"},
                       tmp.path);
    EXPECT_EQ(skip.exitCode, 0) << skip.err;
    const auto runs = store.listRuns();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.front().skipped_records, 1);
}
