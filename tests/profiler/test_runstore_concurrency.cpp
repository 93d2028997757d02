// WAL in practice: readers follow a run while it is being written, several runs write into one
// file at once, and processes racing to create the same new store all end up with one schema.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::makeEval;
using testutil::makeStep;
using testutil::RawDb;
using testutil::TempDir;

TEST(RunStoreConcurrency, ReaderFollowsALiveRun) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    constexpr int64_t kSteps = 3000;
    RunWriterOptions fast;
    fast.commitInterval = std::chrono::milliseconds(5);
    RunWriter writer(path, RunSpec{}, fast);
    const RunId id = writer.runId();

    std::atomic<bool> done{false};
    std::atomic<int> reads{0};
    std::atomic<int> problems{0};
    std::string firstProblem;
    std::thread reader([&] {
        try {
            RunStore store = RunStore::open(path, OpenMode::ReadOnly);
            size_t seen = 0;
            while (!done.load()) {
                const auto steps = store.steps(id);
                // Whole batches only: what is visible is always steps 1..n, never a gap.
                bool consecutive = true;
                for (size_t i = 0; i < steps.size(); ++i) {
                    consecutive = consecutive && steps[i].step == static_cast<int64_t>(i + 1);
                }
                if (!consecutive || steps.size() < seen) ++problems;
                seen = steps.size();
                const auto row = store.run(id);
                if (!row || row->status != RunStatus::Running) ++problems;
                ++reads;
            }
        } catch (const std::exception& error) {
            firstProblem = error.what();
            ++problems;
        }
    });

    for (int64_t s = 1; s <= kSteps; ++s) {
        writer.step(makeStep(s));
        if (s % 250 == 0) writer.eval(makeEval(s));
        if (s % 10 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    writer.flush();
    done = true;
    reader.join();
    writer.finish(RunStatus::Completed, engine::RunSummary{});

    EXPECT_EQ(problems.load(), 0) << firstProblem;
    EXPECT_GT(reads.load(), 1);
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.steps(id).size(), static_cast<size_t>(kSteps));
    EXPECT_EQ(store.run(id)->status, RunStatus::Completed);
}

TEST(RunStoreConcurrency, SeveralRunsWriteIntoOneFile) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    constexpr int kRuns = 3;
    constexpr int64_t kSteps = 1500;
    std::vector<RunId> ids(kRuns);
    std::vector<std::string> errors(kRuns);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRuns; ++r) {
        threads.emplace_back([&, r] {
            try {
                RunWriterOptions fast;
                fast.commitInterval = std::chrono::milliseconds(2);
                RunWriter writer(path, RunSpec{}, fast);
                ids[static_cast<size_t>(r)] = writer.runId();
                for (int64_t s = 1; s <= kSteps; ++s) writer.step(makeStep(s));
                writer.finish(RunStatus::Completed, engine::RunSummary{});
            } catch (const std::exception& error) {
                errors[static_cast<size_t>(r)] = error.what();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& error : errors) EXPECT_EQ(error, "");

    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.listRuns().size(), static_cast<size_t>(kRuns));
    for (RunId id : ids) EXPECT_EQ(store.steps(id).size(), static_cast<size_t>(kSteps));
}

TEST(RunStoreConcurrency, RacingOpensCreateOneSchema) {
    TempDir dir;
    const std::string path = dir.file("new/runs.db");
    constexpr int kOpeners = 4;
    std::vector<std::string> errors(kOpeners);
    std::vector<int> versions(kOpeners, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kOpeners; ++i) {
        threads.emplace_back([&, i] {
            try {
                versions[static_cast<size_t>(i)] = RunStore::open(path).schemaVersion();
            } catch (const std::exception& error) {
                errors[static_cast<size_t>(i)] = error.what();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    for (int i = 0; i < kOpeners; ++i) {
        EXPECT_EQ(errors[static_cast<size_t>(i)], "");
        EXPECT_EQ(versions[static_cast<size_t>(i)], RunStore::latestSchemaVersion());
    }
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM schema_migrations"),
              RunStore::latestSchemaVersion());
}

}  // namespace
}  // namespace trainbench::profiler
