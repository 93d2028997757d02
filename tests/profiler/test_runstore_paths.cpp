// A run store records the paths inside its folder relative to it: the folder moved or copied whole
// still names its own files (checkpoints, data and experiment files kept beside the store), and a
// store written before (absolute paths only) reads as it did.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

namespace fs = std::filesystem;
using testutil::RawDb;
using testutil::TempDir;

using Attributes = std::vector<std::pair<std::string, std::string>>;

// A finished run whose experiment file, data, checkpoint and warm-start source are `inside` (the
// store's folder or elsewhere), with the training data read from `outside` either way.
RunId recordRun(const std::string& db, const fs::path& inside, const Attributes& extra = {}) {
    RunSpec spec;
    spec.name = "paths";
    spec.experiment_file = (inside / "experiments" / "mlp.json").string();
    spec.config_json = nlohmann::json{{"data", {{"path", "/usr/share/datasets/fashion-mnist"},
                                                {"test_files", (inside / "data" / "test-*.tfrecord").string()}}},
                                      {"train", {{"checkpoint_path", (inside / "ck" / "a.ckpt").string()}}}}
                           .dump();
    RunWriter writer(db, spec);
    Attributes a = {{"checkpoint.path", (inside / "ck" / "a.ckpt").string()},
                    {"warm_start.checkpoint", "/elsewhere/b.ckpt"},
                    {"input.source", "2 TFRecord file(s) from " + (inside / "data" / "train-*.tfrecord").string()},
                    {"plan.total_steps", "3"}};
    a.insert(a.end(), extra.begin(), extra.end());
    writer.attributes(a);
    writer.finish(RunStatus::Completed, engine::RunSummary{});
    return writer.runId();
}

std::map<std::string, std::string> attributesOf(RunStore& store, RunId id) {
    std::map<std::string, std::string> out;
    for (auto& [k, v] : store.attributes(id)) out[k] = v;
    return out;
}

// Every text the store holds, as one string: what `sqlite3 runs.db .dump | grep` would search.
std::string everyText(const std::string& db) {
    RawDb raw(db);
    std::string all;
    for (const char* table : {"runs", "run_attributes"})
        for (const auto& row : raw.textRows(std::string("SELECT * FROM ") + table))
            for (const std::string& value : row) all += value + "\n";
    return all;
}

TEST(RunStorePaths, TheFilesOfAStoreMovedWithItsFolderAreFoundWhereTheFolderIsNow) {
    TempDir tmp;
    const fs::path before = tmp.path() / "before", after = tmp.path() / "after";
    fs::create_directories(before);
    const RunId id = recordRun((before / "runs.db").string(), before);
    EXPECT_EQ(everyText((before / "runs.db").string()).find(before.string()), std::string::npos)
        << "no path of the folder is recorded as it is:\n" << everyText((before / "runs.db").string());

    fs::rename(before, after);
    RunStore store = RunStore::open((after / "runs.db").string(), OpenMode::ReadOnly);
    const std::optional<RunRow> row = store.run(id);
    ASSERT_TRUE(row);
    EXPECT_EQ(row->experiment_file, (after / "experiments" / "mlp.json").string());
    const nlohmann::json config = nlohmann::json::parse(row->config_json);
    EXPECT_EQ(config["data"]["path"], "/usr/share/datasets/fashion-mnist") << "outside the folder: absolute";
    EXPECT_EQ(config["data"]["test_files"], (after / "data" / "test-*.tfrecord").string());
    EXPECT_EQ(config["train"]["checkpoint_path"], (after / "ck" / "a.ckpt").string());
    EXPECT_EQ(store.listRuns().at(0).config_json, row->config_json);
    EXPECT_EQ(store.findRun("paths")->experiment_file, row->experiment_file);

    auto attributes = attributesOf(store, id);
    EXPECT_EQ(attributes["checkpoint.path"], (after / "ck" / "a.ckpt").string());
    EXPECT_EQ(attributes["warm_start.checkpoint"], "/elsewhere/b.ckpt");
    EXPECT_EQ(attributes["input.source"], "2 TFRecord file(s) from " + (after / "data" / "train-*.tfrecord").string());
    EXPECT_EQ(attributes["plan.total_steps"], "3");
    EXPECT_EQ(store.profileInput(id).experiment, config) << "the profiler reads the same experiment";
}

TEST(RunStorePaths, AStoreOpenedThroughAnotherSpellingOfItsFolderResolvesInThatSpelling) {
    TempDir tmp;
    const fs::path folder = tmp.path() / "runs";
    fs::create_directories(folder);
    const RunId id = recordRun((folder / "runs.db").string(), folder);
    fs::create_directory_symlink(folder, tmp.path() / "link");
    RunStore store = RunStore::open((tmp.path() / "link" / "runs.db").string(), OpenMode::ReadOnly);
    EXPECT_EQ(attributesOf(store, id)["checkpoint.path"], (tmp.path() / "link" / "ck" / "a.ckpt").string());
}

TEST(RunStorePaths, PathsOutsideTheFolderStayAbsolute) {
    TempDir tmp;
    const fs::path store = tmp.path() / "store", elsewhere = tmp.path() / "elsewhere";
    fs::create_directories(store);
    const RunId id = recordRun((store / "runs.db").string(), elsewhere);
    RawDb raw((store / "runs.db").string());
    EXPECT_EQ(raw.text("SELECT experiment_file FROM runs"), (elsewhere / "experiments" / "mlp.json").string());
    EXPECT_EQ(raw.text("SELECT value FROM run_attributes WHERE key = 'checkpoint.path'"),
              (elsewhere / "ck" / "a.ckpt").string());
    RunStore reader = RunStore::open((store / "runs.db").string(), OpenMode::ReadOnly);
    EXPECT_EQ(attributesOf(reader, id)["checkpoint.path"], (elsewhere / "ck" / "a.ckpt").string());
}

// Earlier versions recorded every path absolute (and a relative experiment_file as given): such
// a store reads exactly as before, also after its folder moved (its paths still name the old place).
TEST(RunStorePaths, AStoreOfAnEarlierVersionReadsAsRecorded) {
    TempDir tmp;
    const fs::path folder = tmp.path() / "old";
    fs::create_directories(folder);
    const std::string db = (folder / "runs.db").string();
    const RunId id = recordRun(db, tmp.path() / "elsewhere");
    const std::string checkpoint = (folder / "checkpoints" / "run-1.ckpt").string();
    const std::string config = R"({"data": {"path": ")" + (folder / "data").string() + R"("}, "seed": 1})";
    {
        RawDb raw(db);
        raw.exec("UPDATE runs SET experiment_file = 'experiments/mlp.json', config_json = " + testutil::quoted(config));
        raw.exec("UPDATE run_attributes SET value = " + testutil::quoted(checkpoint) + " WHERE key = 'checkpoint.path'");
        raw.exec("UPDATE run_attributes SET value = " + testutil::quoted("1 file from " + (folder / "a").string()) +
                 " WHERE key = 'input.source'");
    }
    for (const fs::path& open : {folder, tmp.path() / "moved"}) {
        if (open != folder) fs::rename(folder, open);
        RunStore store = RunStore::open((open / "runs.db").string(), OpenMode::ReadOnly);
        EXPECT_EQ(store.run(id)->experiment_file, "experiments/mlp.json");
        EXPECT_EQ(store.run(id)->config_json, config) << "the text as it was written";
        auto attributes = attributesOf(store, id);
        EXPECT_EQ(attributes["checkpoint.path"], checkpoint);
        EXPECT_EQ(attributes["input.source"], "1 file from " + (folder / "a").string());
    }
}

}  // namespace
}  // namespace trainbench::profiler
