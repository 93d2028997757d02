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
}  // namespace trainbench::profiler
