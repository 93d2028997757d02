// Load tests in the store (schema 9): a run's kind, its points and their seconds written by
// RunWriter read back exactly; a store of schema 8 read read-only shows kind 'train' (or 'predict'
// for a prediction run) and no points, and migrating it keeps every row.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/telemetry/runrecords.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/profiler/olderstore.h"

namespace trainbench::profiler {
namespace {

using testutil::TempDir;

LoadTestPoint point(int64_t index, double qps) {
    LoadTestPoint p;
    p.point = index;
    p.scenario = "server";
    p.target_qps = qps;
    p.queries = 200 + index;
    p.achieved_qps = qps * 0.99;
    p.p50_ms = 1.25;
    p.p90_ms = 2.5;
    p.p95_ms = 3.0;
    p.p99_ms = 7.75;
    p.p999_ms = 12.0;
    p.queue_ms = 0.5;
    p.batch_ms = 0.25;
    p.compute_ms = 0.4;
    p.serialize_ms = 0.05;
    p.network_ms = 0.3;
    p.client_bound = index == 1;
    p.errors = index;
    p.seconds = {{0, 99, 0, 1.0, 6.5}, {1, 101, index, 1.5, std::nullopt}};
    return p;
}

TEST(RunStoreLoadTest, AServeRunsKindPointsAndSecondsReadBack) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunSpec spec;
    spec.name = "loadtest-fmnist";
    spec.kind = "serve";
    RunId id{0};
    {
        RunWriter writer(path, spec);
        id = writer.runId();
        writer.loadTestPoint(point(0, 100));
        writer.loadTestPoint(point(1, 400));
        LoadTestPoint sweep;
        sweep.point = 2;
        sweep.scenario = "concurrency";
        sweep.concurrency = 4;
        sweep.queries = 50;
        sweep.achieved_qps = 321.5;  // no server timing: the breakdown stays NULL
        writer.loadTestPoint(sweep);
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.run(id)->kind, "serve");
    const std::vector<LoadTestPoint> points = store.loadTestPoints(id);
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(points[0], point(0, 100));
    EXPECT_EQ(points[1], point(1, 400));
    EXPECT_EQ(points[2].concurrency, 4);
    EXPECT_FALSE(points[2].target_qps);
    EXPECT_FALSE(points[2].compute_ms);
    EXPECT_TRUE(points[2].seconds.empty());
}

TEST(RunStoreLoadTest, ATrainingRunIsOfKindTrainWithNoPoints) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunId id{0};
    {
        RunWriter writer(path, RunSpec{});
        id = writer.runId();
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.run(id)->kind, "train");
    EXPECT_TRUE(store.loadTestPoints(id).empty());
}

TEST(RunStoreLoadTest, AStoreOfSchema8ReadsKindsAndNoPointsAndMigratesPredictionRunsToPredict) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    testutil::createStoreAtVersion(path, 8);
    {
        testutil::RawDb db(path);
        db.exec("INSERT INTO runs (id, name, status, config_json, strategy, devices, host, pid, started_at) VALUES "
                "(1, 'trained', 'completed', '{}', 'single', 'cpu', 'h', 1, '2026-01-01T00:00:00.000Z'), "
                "(2, 'predicted', 'completed', '{}', 'single', 'cpu', 'h', 1, '2026-01-01T00:00:00.000Z')");
        db.exec("INSERT INTO run_attributes (run_id, key, value) VALUES (2, '" + std::string(runattr::kPredictSourceRun) +
                "', '1')");
    }
    {
        RunStore old = RunStore::open(path, OpenMode::ReadOnly);
        EXPECT_EQ(old.schemaVersion(), 8);
        EXPECT_EQ(old.run(RunId{1})->kind, "train");  // the view's default: the read-only path writes nothing
        EXPECT_TRUE(old.loadTestPoints(RunId{1}).empty());
    }
    RunStore migrated = RunStore::open(path, OpenMode::ReadWrite);
    EXPECT_EQ(migrated.schemaVersion(), RunStore::latestSchemaVersion());
    EXPECT_EQ(migrated.run(RunId{1})->kind, "train");
    EXPECT_EQ(migrated.run(RunId{2})->kind, "predict");
}

}  // namespace
}  // namespace trainbench::profiler
