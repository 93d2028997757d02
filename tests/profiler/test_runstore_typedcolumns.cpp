// Enumerated values in the run store: the file holds their names (users query them with sqlite3).
// The stop reason is written from the trainer's enum and read back as the text it is (only shown,
// never branched on, so a run recorded by another version stays readable); the strategy is read
// back as its kind where the profiler branches on it, and a text this binary does not know fails
// that read naming the file, the run and the text.
#include <gtest/gtest.h>

#include "engine/telemetry/stopreason.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::RawDb;
using testutil::TempDir;

RunId finishedRun(const std::string& path, std::optional<engine::StopReason> reason) {
    RunWriter writer(path, RunSpec{});
    engine::RunSummary summary;
    summary.stop_reason = reason;
    writer.finish(RunStatus::Completed, summary);
    return writer.runId();
}

TEST(RunStoreTypedColumns, StopReasonsAreStoredByNameAndReadBack) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    for (engine::StopReason reason : engine::kStopReasons) {
        const RunId id = finishedRun(path, reason);
        EXPECT_EQ(RawDb(path).text("SELECT stop_reason FROM runs WHERE id = " + std::to_string(id.value)),
                  engine::stopReasonName(reason));
        EXPECT_EQ(RunStore::open(path).run(id)->stop_reason, engine::stopReasonName(reason));
    }
    const RunId none = finishedRun(path, std::nullopt);
    EXPECT_EQ(RawDb(path).text("SELECT quote(stop_reason) FROM runs WHERE id = " + std::to_string(none.value)), "NULL");
    EXPECT_EQ(RunStore::open(path).run(none)->stop_reason, std::nullopt);
}

TEST(RunStoreTypedColumns, TheProfilerReadsTheStrategyAsItsKindAndRefusesAnUnknownOne) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunSpec spec;
    spec.strategy = "parameter_server";
    RunId id;
    {
        RunWriter writer(path, spec);
        id = writer.runId();
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    EXPECT_EQ(RunStore::open(path).profileInput(id).strategy, engine::StrategyKind::ParameterServer);
    RawDb(path).exec("UPDATE runs SET strategy = 'zero3' WHERE id = " + std::to_string(id.value));
    try {
        RunStore::open(path).profileInput(id);
        FAIL() << "no StoreError";
    } catch (const StoreError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": run " + std::to_string(id.value) + " has unknown strategy 'zero3'");
    }
}

}  // namespace
// memory.splits is JSON another version (or a hand edit) may have written: the profile keeps the
// entries that are what a run writes and leaves the rest out, never failing the read.
TEST(RunStoreTypedColumns, TheSplitsOfAMemoryFootprintSurviveMalformedJson) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunId id;
    {
        RunWriter writer(path, RunSpec{});
        id = writer.runId();
        writer.attributes({{"memory.device_bytes", "1000"}});
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    auto splitsWith = [&](const std::string& text) {
        RawDb(path).exec("INSERT OR REPLACE INTO run_attributes (run_id, key, value) VALUES (" +
                         std::to_string(id.value) + ", 'memory.splits', '" + text + "')");
        const auto memory = RunStore::open(path).profileInput(id).memory;
        EXPECT_TRUE(memory.has_value());
        return memory ? memory->splits : std::vector<PipelineSplit>{};
    };
    const std::string good = R"({"stages": 2, "micro_batches": 8, "recompute": true, "needed_bytes": 500,
        "capacity_bytes": 1000, "activation_bytes": 100})";
    const auto kept = splitsWith("[" + good + "]");
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].stages, 2);
    EXPECT_TRUE(kept[0].recompute);
    EXPECT_EQ(kept[0].needed_bytes, 500.0);
    EXPECT_TRUE(splitsWith("[" + good.substr(0, 40)).empty());                       // truncated
    EXPECT_TRUE(splitsWith(R"({"stages": 2})").empty());                              // not a list
    EXPECT_EQ(splitsWith(R"([1, "x", {"stages": "2"}, {"stages": 1, "micro_batches": 1, "needed_bytes": 1,
        "capacity_bytes": 1, "activation_bytes": 0}, )" + good + "]").size(), 1u);  // only the valid entry
}

}  // namespace trainbench::profiler
