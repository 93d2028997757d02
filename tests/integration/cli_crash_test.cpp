// A run process that dies (SIGKILL) or is stopped (SIGINT) leaves a consistent store: the run shows
// as interrupted or stopped with every step it had committed.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::CliProcess;
using trainbench::testing::TempDir;

namespace {
using trainbench::testing::kMlp;

// Waits until the run has committed at least `steps` steps (read-only, like the GUI would).
int64_t waitForSteps(const std::string& db, int64_t steps) {
    for (int i = 0; i < 600; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!std::filesystem::exists(db)) continue;
        try {
            auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
            auto runs = store.listRuns();
            if (runs.empty()) continue;
            auto s = store.steps(runs[0].id);
            if (static_cast<int64_t>(s.size()) >= steps) return static_cast<int64_t>(s.size());
        } catch (const std::exception&) {
        }
    }
    return -1;
}

std::string integrityCheck(const std::string& db) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr);
    std::string out = sqlite3_step(st) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) : "?";
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

std::vector<std::string> longRun(const std::string& db) {
    return {"run", kMlp, "--db", db, "--set", "train.epochs=50", "--set", "train.threads=1",
            "--set", "train.eval_every_steps=50", "--set", "data.test_limit=500"};
}
}  // namespace

TEST(CliCrash, SigkillMidRunLeavesAnIntactStoreWithTheRunInterrupted) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    CliProcess proc(longRun(db), tmp.path);
    const int64_t seen = waitForSteps(db, 60);
    ASSERT_GT(seen, 0) << "the run never committed steps: " << proc.currentErr();
    proc.signal(SIGKILL);
    auto r = proc.wait();
    EXPECT_EQ(r.exitCode, 128 + SIGKILL);

    EXPECT_EQ(integrityCheck(db), "ok");
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadWrite);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Interrupted);
    auto steps = store.steps(runs[0].id);
    ASSERT_GE(static_cast<int64_t>(steps.size()), seen) << "steps committed before the kill were lost";
    for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
    ASSERT_TRUE(runs[0].message.has_value());

    // The CLI's listing shows it the same way.
    auto list = trainbench::testing::runCli({"runs", "--db", db}, tmp.path);
    EXPECT_NE(list.out.find("interrupted"), std::string::npos) << list.out;
}

TEST(CliCrash, CtrlCStopsTheRunAndKeepsItsData) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    CliProcess proc(longRun(db), tmp.path);
    ASSERT_GT(waitForSteps(db, 30), 0) << proc.currentErr();
    proc.signal(SIGINT);
    auto r = proc.wait();
    EXPECT_EQ(r.exitCode, 130) << r.err;
    EXPECT_NE(r.out.find("stopped"), std::string::npos) << r.out;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Stopped);
    ASSERT_TRUE(runs[0].steps.has_value());
    EXPECT_EQ(static_cast<int64_t>(store.steps(runs[0].id).size()), *runs[0].steps);
    EXPECT_EQ(integrityCheck(db), "ok");
}
