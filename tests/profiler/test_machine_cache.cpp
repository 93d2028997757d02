// The machines table as a cache of roofs: measured once per host and thread count, answered from
// the store after that, replaced on request, shared by processes that start at once, and never
// written into a store this binary may only read. A stand-in measurer counts the measurements.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "profiler/machine/calibration.h"
#include "profiler/machine/machinecache.h"
#include "profiler/store/database.h"
#include "profiler/store/runstore.h"
#include "profiler/store/schema.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::RawDb;
using testutil::TempDir;

// Each measurement gets a peak of 100 + its number, so rows show which measurement they hold.
class CountingMeasurer {
public:
    explicit CountingMeasurer(std::chrono::milliseconds delay = {}) : delay_(delay) {}

    RoofsMeasurer fn() {
        return [this](int threads) {
            const int call = ++calls_;
            std::this_thread::sleep_for(delay_);
            MachineRoofs roofs;
            roofs.host = "set-by-the-measurer";  // roofsFor keys the row by the real host
            roofs.threads = threads;
            roofs.cpu_model = "Test CPU";
            roofs.peak_gflops = 100.0 + call;
            roofs.bandwidth_gbs = 10.0;
            roofs.measured_at = "2024-05-01T12:00:0" + std::to_string(call % 10) + ".000Z";
            roofs.details_json = R"({"call":)" + std::to_string(call) + "}";
            return roofs;
        };
    }
    int calls() const { return calls_; }

private:
    std::chrono::milliseconds delay_;
    std::atomic<int> calls_{0};
};

void expectSameRoofs(const MachineRoofs& a, const MachineRoofs& b) {
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.threads, b.threads);
    EXPECT_EQ(a.cpu_model, b.cpu_model);
    EXPECT_EQ(a.peak_gflops, b.peak_gflops);
    EXPECT_EQ(a.bandwidth_gbs, b.bandwidth_gbs);
    EXPECT_EQ(a.measured_at, b.measured_at);
    EXPECT_EQ(a.details_json, b.details_json);
}

TEST(MachineCache, MeasuresOnceThenAnswersFromTheStore) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    CountingMeasurer measurer;

    const MachineRoofs first = roofsFor(path, 1, false, measurer.fn());
    EXPECT_EQ(measurer.calls(), 1);
    EXPECT_EQ(first.host, currentHost());
    EXPECT_EQ(first.threads, 1);
    EXPECT_EQ(first.peak_gflops, 101.0);

    const MachineRoofs second = roofsFor(path, 1, false, measurer.fn());
    EXPECT_EQ(measurer.calls(), 1);
    expectSameRoofs(first, second);

    // The row as a user sees it with the sqlite3 shell.
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM machines"), 1);
    EXPECT_EQ(raw.text("SELECT host FROM machines"), currentHost());
    EXPECT_EQ(raw.integer("SELECT threads FROM machines"), 1);
    EXPECT_EQ(raw.text("SELECT cpu_model FROM machines"), "Test CPU");
    EXPECT_EQ(raw.text("SELECT peak_gflops FROM machines"), "101.0");
    EXPECT_EQ(raw.text("SELECT bandwidth_gbs FROM machines"), "10.0");
    EXPECT_EQ(raw.text("SELECT details_json FROM machines"), R"({"call":1})");
}

TEST(MachineCache, EachThreadCountHasItsOwnRow) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    CountingMeasurer measurer;
    EXPECT_EQ(roofsFor(path, 1, false, measurer.fn()).peak_gflops, 101.0);
    EXPECT_EQ(roofsFor(path, 2, false, measurer.fn()).peak_gflops, 102.0);
    EXPECT_EQ(roofsFor(path, 1, false, measurer.fn()).peak_gflops, 101.0);
    EXPECT_EQ(roofsFor(path, 2, false, measurer.fn()).threads, 2);
    EXPECT_EQ(measurer.calls(), 2);
    EXPECT_EQ(RawDb(path).integer("SELECT count(*) FROM machines"), 2);
}

TEST(MachineCache, RemeasureReplacesTheRow) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    CountingMeasurer measurer;
    roofsFor(path, 1, false, measurer.fn());
    const MachineRoofs again = roofsFor(path, 1, true, measurer.fn());
    EXPECT_EQ(measurer.calls(), 2);
    EXPECT_EQ(again.peak_gflops, 102.0);
    expectSameRoofs(roofsFor(path, 1, false, measurer.fn()), again);
    EXPECT_EQ(measurer.calls(), 2);
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM machines"), 1);
    EXPECT_EQ(raw.text("SELECT details_json FROM machines"), R"({"call":2})");
}

TEST(MachineCache, ProcessesStartingTogetherMeasureOnce) {
    // Workers of one job start at the same moment: the first measures, the others wait for it and
    // use its row (concurrent measurements would each see half the machine).
    TempDir dir;
    const std::string path = dir.file("runs.db");
    CountingMeasurer measurer(std::chrono::milliseconds(300));
    MachineRoofs a, b;
    std::thread first([&] { a = roofsFor(path, 1, false, measurer.fn()); });
    std::thread second([&] { b = roofsFor(path, 1, false, measurer.fn()); });
    first.join();
    second.join();
    EXPECT_EQ(measurer.calls(), 1);
    expectSameRoofs(a, b);
}

TEST(MachineCache, SaveAndCachedRoofsRoundTripThroughTheStore) {
    TempDir dir;
    Database db(dir.file("runs.db"), Database::Access::ReadWrite);
    Schema::prepare(db, true);
    EXPECT_FALSE(cachedRoofs(db, "node-7", 4).has_value());

    MachineRoofs roofs;
    roofs.host = "node-7";
    roofs.threads = 4;
    roofs.cpu_model = "Some CPU @ 2.0GHz";
    roofs.peak_gflops = 412.5;
    roofs.bandwidth_gbs = 19.25;
    roofs.measured_at = "2024-05-01T12:00:00.000Z";
    roofs.details_json = R"({"peak":{"matmul_n":2048}})";
    saveRoofs(db, roofs);

    Statement query(db, "SELECT host, threads, cpu_model, peak_gflops, bandwidth_gbs, measured_at, "
                        "details_json FROM machines");
    ASSERT_TRUE(query.step());
    EXPECT_EQ(query.columnText(0), "node-7");
    EXPECT_EQ(query.columnInt(1), 4);
    EXPECT_EQ(query.columnText(2), "Some CPU @ 2.0GHz");
    EXPECT_EQ(query.columnDouble(3), 412.5);
    EXPECT_EQ(query.columnDouble(4), 19.25);
    EXPECT_EQ(query.columnText(5), "2024-05-01T12:00:00.000Z");
    EXPECT_EQ(query.columnText(6), R"({"peak":{"matmul_n":2048}})");
    EXPECT_FALSE(query.step());
    query.reset();

    const auto cached = cachedRoofs(db, "node-7", 4);
    ASSERT_TRUE(cached.has_value());
    expectSameRoofs(*cached, roofs);
    EXPECT_FALSE(cachedRoofs(db, "node-7", 2).has_value());
    EXPECT_FALSE(cachedRoofs(db, "node-8", 4).has_value());
}

TEST(MachineCache, MeaninglessRoofsAreNotSaved) {
    TempDir dir;
    Database db(dir.file("runs.db"), Database::Access::ReadWrite);
    Schema::prepare(db, true);
    MachineRoofs roofs;
    roofs.host = "node-7";
    roofs.threads = 1;
    roofs.measured_at = "2024-05-01T12:00:00.000Z";
    roofs.peak_gflops = 100.0;
    roofs.bandwidth_gbs = 0.0;
    EXPECT_THROW(saveRoofs(db, roofs), std::invalid_argument);
    roofs.bandwidth_gbs = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(saveRoofs(db, roofs), std::invalid_argument);
    roofs.bandwidth_gbs = 10.0;
    roofs.threads = 0;
    EXPECT_THROW(saveRoofs(db, roofs), std::invalid_argument);
    EXPECT_EQ(RawDb(db.path()).integer("SELECT count(*) FROM machines"), 0);
}

TEST(MachineCache, ANewerStoreAnswersFromItsCacheButIsNotWritten) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    CountingMeasurer measurer;
    const MachineRoofs cached = roofsFor(path, 1, false, measurer.fn());
    RawDb(path).exec("PRAGMA user_version = " + std::to_string(RunStore::latestSchemaVersion() + 1));

    expectSameRoofs(roofsFor(path, 1, false, measurer.fn()), cached);
    EXPECT_EQ(measurer.calls(), 1);

    const MachineRoofs fresh = roofsFor(path, 2, false, measurer.fn());
    EXPECT_EQ(measurer.calls(), 2);
    EXPECT_EQ(fresh.threads, 2);
    EXPECT_EQ(fresh.peak_gflops, 102.0);
    EXPECT_EQ(RawDb(path).integer("SELECT count(*) FROM machines"), 1);
    // Nothing was saved, so the next run measures again.
    roofsFor(path, 2, false, measurer.fn());
    EXPECT_EQ(measurer.calls(), 3);
}

}  // namespace
}  // namespace trainbench::profiler
