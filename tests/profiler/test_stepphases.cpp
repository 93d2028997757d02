// The step phases' one table (engine/telemetry/stepphases.h) against what cannot iterate it: the
// schema the migrations build, and stores written before the breakdown existed. Every phase goes
// through the run store and back, so a row of the table with a wrong column or flag shows here.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/profiler/olderstore.h"

namespace trainbench::profiler {
namespace {

using testutil::RawDb;
using testutil::TempDir;

struct Column {
    std::string name, type;
};

// The columns of `table` in schema order (as the CSV export lists them).
std::vector<Column> typedColumnsOf(RawDb& db, const std::string& table) {
    std::vector<Column> out;
    for (auto& row : db.textRows("SELECT name, type FROM pragma_table_info(" + testutil::quoted(table) + ") ORDER BY cid"))
        out.push_back({row[0], row[1]});
    return out;
}

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The phase columns of `table`; fails on a *_seconds column that is neither a phase
// nor one of the table's own `others`.
std::vector<std::string> phaseColumnsOf(RawDb& db, const std::string& table, const std::set<std::string>& others) {
    std::set<std::string> phases;
    for (const StepPhase& p : kStepPhases) phases.insert(std::string(p.column));
    std::vector<std::string> out;
    for (const Column& c : typedColumnsOf(db, table)) {
        if (phases.count(c.name)) {
            EXPECT_EQ(c.type, "REAL") << table << '.' << c.name;
            out.push_back(c.name);
        } else if (endsWith(c.name, "_seconds")) {
            EXPECT_TRUE(others.count(c.name)) << table << '.' << c.name << " is no phase of kStepPhases";
        }
    }
    return out;
}

// The store names its columns in every INSERT and SELECT, so their order in the file is free: a
// migration appends a new phase's column wherever the table lists it.
std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

TEST(StepPhases, TheMigratedSchemaHasAColumnForEveryPhase) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    RawDb db(path);
    std::vector<std::string> steps, replicas;
    for (const StepPhase& p : kStepPhases) {
        steps.emplace_back(p.column);
        if (p.perReplica) replicas.emplace_back(p.column);
    }
    EXPECT_EQ(sorted(phaseColumnsOf(db, "steps", {"step_seconds", "wall_seconds", "comm_seconds", "wait_seconds"})),
              sorted(steps));
    EXPECT_EQ(sorted(phaseColumnsOf(db, "replica_steps", {"compute_seconds", "comm_seconds", "wait_seconds"})),
              sorted(replicas));
}

TEST(StepPhases, EveryPhaseIsStoredInItsColumnAndReadsBack) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    engine::StepRecord written = testutil::makeStep(1);
    for (size_t i = 0; i < kStepPhases.size(); ++i) {
        written.*kStepPhases[i].seconds = static_cast<double>(i + 1) / 1000.0;  // exact in SQLite's 15-digit text too
        for (engine::ReplicaStep& r : written.replicas)
            r.*kStepPhases[i].seconds = kStepPhases[i].perReplica ? static_cast<double>(i + 1) / 100.0 + r.rank : 0.0;
    }
    RunId id;
    {
        RunSpec spec;
        spec.config_json = "{}";
        RunWriter writer(path, spec);
        id = writer.runId();
        writer.step(written);
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const std::vector<StepSample> steps = store.steps(id);
    ASSERT_EQ(steps.size(), 1u);
    const std::vector<ReplicaStepRow> replicas = store.replicaSteps(id);
    ASSERT_EQ(replicas.size(), written.replicas.size());
    RawDb db(path);
    for (const StepPhase& p : kStepPhases) {
        SCOPED_TRACE(std::string(p.column));
        EXPECT_EQ(steps[0].*p.seconds, written.*p.seconds);
        EXPECT_EQ(std::stod(db.text("SELECT " + std::string(p.column) + " FROM steps")), written.*p.seconds);
        for (size_t r = 0; r < replicas.size(); ++r) EXPECT_EQ(replicas[r].replica.*p.seconds, written.replicas[r].*p.seconds);
    }
    // The columns the stores out there already hold keep their fields.
    const std::map<std::string, double> byName = {
        {"input_seconds", written.input_seconds},           {"forward_seconds", written.forward_seconds},
        {"backward_seconds", written.backward_seconds},     {"optimizer_seconds", written.optimizer_seconds},
        {"exposed_comm_seconds", written.exposed_comm_seconds}, {"other_seconds", written.other_seconds},
        {"eval_seconds", written.eval_seconds},             {"checkpoint_seconds", written.checkpoint_seconds}};
    for (const auto& [column, value] : byName)
        EXPECT_EQ(std::stod(db.text("SELECT " + column + " FROM steps")), value) << column;
}

TEST(StepPhases, StepsRecordedBeforeTheBreakdownReadAllButInputAsOther) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    testutil::createStoreAtVersion(path, 4);
    int64_t run = 0, step = 0;
    {
        RawDb db(path);
        testutil::fillEveryTable(db, 1);
        db.exec("UPDATE steps SET step_seconds = 1.0, input_seconds = 0.25");
        run = std::stoll(db.text("SELECT run_id FROM steps"));
        step = std::stoll(db.text("SELECT step FROM steps"));
    }
    for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite}) {  // read as if migrated, then migrated
        SCOPED_TRACE(mode == OpenMode::ReadOnly ? "read-only" : "migrated");
        RunStore store = RunStore::open(path, mode);
        const std::vector<StepSample> steps = store.steps(RunId{run});
        ASSERT_EQ(steps.size(), 1u);
        EXPECT_EQ(steps[0].step, step);
        for (const StepPhase& p : kStepPhases) {
            const double expected = p.phase == engine::prof::Phase::Input ? 0.25
                                    : p.phase == engine::prof::Phase::Other ? 0.75
                                                                           : 0.0;
            EXPECT_EQ(steps[0].*p.seconds, expected) << p.column;
        }
    }
}

}  // namespace
}  // namespace trainbench::profiler
