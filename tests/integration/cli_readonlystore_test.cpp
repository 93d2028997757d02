// The commands that only read the store (runs, show, export, profile, report, tta, plan) leave it
// exactly as it was — an older schema is not migrated, a dead run is shown interrupted but not
// marked — while a command that records (run) upgrades it and keeps every row.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/profiler/olderstore.h"

using namespace trainbench;
using trainbench::testing::runCli;

namespace {

using trainbench::testing::kMlp;

// A store of an older schema with rows in every table and a run left 'running' by a process that
// is gone (id returned through deadRun).
std::string olderStoreWithADeadRun(const std::filesystem::path& dir, int64_t& deadRun) {
    const std::string db = (dir / "runs.db").string();
    profiler::testutil::createStoreAtVersion(db, profiler::RunStore::latestSchemaVersion() - 2);
    {
        profiler::testutil::RawDb raw(db);
        profiler::testutil::fillEveryTable(raw, 3);
    }
    profiler::ProcessIdentity writer = profiler::ProcessIdentity::current();
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    writer.pid = child;
    deadRun = profiler::testutil::insertRunningRow(db, writer, 5);
    return db;
}

}  // namespace

TEST(CliReadOnlyStore, ReadingCommandsLeaveAnOlderStoreAndItsDeadRunUnchanged) {
    trainbench::testing::TempDir tmp;
    int64_t dead = 0;
    const std::string db = olderStoreWithADeadRun(tmp.path, dead);
    const std::string bytes = profiler::testutil::fileBytes(db);
    const auto content = profiler::testutil::contentOf(db);
    const std::string id = std::to_string(dead);
    const std::vector<std::vector<std::string>> commands = {
        {"runs", "--db", db},
        {"show", id, "--db", db},
        {"export", id, "--csv", "--db", db},
        {"profile", id, "--db", db},
        {"report", id, "--html", (tmp.path / "report.html").string(), "--db", db},
        {"tta", "--target", "0.5", "--db", db},
        {"plan", "--target", "0.5", "--db", db},
    };
    for (const auto& args : commands) {
        const auto r = runCli(args, tmp.path);
        EXPECT_EQ(r.exitCode, 0) << args[0] << ": " << r.err;
        EXPECT_TRUE(profiler::testutil::fileBytes(db) == bytes) << args[0] << " changed the store file";
        if (args[0] == "runs") {
            EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
        }
    }
    EXPECT_EQ(profiler::testutil::contentOf(db), content);
    profiler::testutil::RawDb raw(db);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), profiler::RunStore::latestSchemaVersion() - 2);
    EXPECT_EQ(raw.text("SELECT status FROM runs WHERE id = " + id), "running");
}

TEST(CliReadOnlyStore, ARunUpgradesAnOlderStoreAndKeepsEveryRow) {
    trainbench::testing::TempDir tmp;
    int64_t dead = 0;
    const std::string db = olderStoreWithADeadRun(tmp.path, dead);
    const auto before = profiler::testutil::contentOf(db);
    const auto r = runCli({"run", kMlp, "--db", db, "-q", "--set", "train.epochs=0", "--set", "train.max_steps=5",
                           "--set", "data.train_limit=640", "--set", "data.test_limit=100", "--set", "train.threads=1"},
                          tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    profiler::testutil::RawDb raw(db);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), profiler::RunStore::latestSchemaVersion());
    EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
    // A writer stores what it finds: the dead run is now marked.
    EXPECT_EQ(raw.text("SELECT status FROM runs WHERE id = " + std::to_string(dead)), "interrupted");
    for (const auto& [table, content] : before) {
        if (table == "runs" || table == "schema_migrations") continue;
        const auto rows = profiler::testutil::rowsOf(raw, table, content.columns);
        EXPECT_TRUE(std::includes(rows.begin(), rows.end(), content.rows.begin(), content.rows.end())) << table;
    }
    EXPECT_EQ(raw.integer("SELECT count(*) FROM runs"), static_cast<int64_t>(before.at("runs").rows.size()) + 1);
}
