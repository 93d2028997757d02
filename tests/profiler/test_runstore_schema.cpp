// Opening files: a new or empty file gets the latest schema; a newer schema opens read-only and
// refuses writes; files that are not run stores (foreign SQLite files, random bytes, damaged
// pages) fail with a StoreError naming the file and SQLite's reason.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "profiler/store/migrations.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/schema.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::makeStep;
using testutil::RawDb;
using testutil::TempDir;

// Runs fn, which must throw StoreError, and returns the message.
template <typename Fn>
std::string storeErrorOf(Fn fn) {
    try {
        fn();
    } catch (const StoreError& error) {
        return error.what();
    }
    ADD_FAILURE() << "no StoreError thrown";
    return {};
}

void writeRandomBytes(const std::string& path, size_t size, size_t offset = 0) {
    std::mt19937 random(42);
    std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
    if (!out) out.open(path, std::ios::out | std::ios::binary);
    out.seekp(static_cast<std::streamoff>(offset));
    for (size_t i = 0; i < size; ++i) out.put(static_cast<char>(random() & 0xFF));
}

void recordRun(const std::string& path, int64_t steps) {
    RunWriter writer(path, RunSpec{});
    for (int64_t s = 1; s <= steps; ++s) writer.step(makeStep(s));
    writer.finish(RunStatus::Completed, engine::RunSummary{});
}

TEST(RunStoreSchema, MigrationsAreNumberedFromOneWithoutGaps) {
    int expected = 1;
    for (const Migration& migration : migrations()) {
        EXPECT_EQ(migration.version, expected++);
        EXPECT_FALSE(migration.sql.empty());
    }
    EXPECT_EQ(RunStore::latestSchemaVersion(), expected - 1);
}

TEST(RunStoreSchema, EmptyFileGetsLatestVersion) {
    TempDir dir;
    const std::string path = dir.file("empty.db");
    std::ofstream(path).close();  // zero bytes, as `touch` leaves it
    {
        RunStore store = RunStore::open(path);
        EXPECT_EQ(store.schemaVersion(), RunStore::latestSchemaVersion());
        EXPECT_FALSE(store.readOnly());
        EXPECT_EQ(store.path(), path);
        EXPECT_TRUE(store.listRuns().empty());
    }
    RawDb raw(path);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), RunStore::latestSchemaVersion());
    EXPECT_EQ(raw.integer("PRAGMA application_id"), Schema::kApplicationId);
    EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
    for (const char* table : {"runs", "steps", "evals", "schema_migrations"}) {
        EXPECT_EQ(raw.integer(std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                                          "AND name = '") + table + "'"), 1)
            << table;
    }
    EXPECT_EQ(raw.integer("SELECT count(*) FROM schema_migrations"),
              RunStore::latestSchemaVersion());
    EXPECT_EQ(raw.text("PRAGMA foreign_key_check"), "");
}

TEST(RunStoreSchema, ReadWriteCreatesMissingFolders) {
    TempDir dir;
    const std::string path = dir.file("a/b/c/runs.db");
    RunStore store = RunStore::open(path);
    EXPECT_TRUE(std::filesystem::exists(path));
    RunStore again = RunStore::open(path);  // reopening migrates nothing
    EXPECT_EQ(again.schemaVersion(), RunStore::latestSchemaVersion());
}

TEST(RunStoreSchema, FirstRunCreatesMissingFolders) {
    // The first run on a new machine writes to ~/.local/share/trainbench/runs.db before anything
    // else has created that folder.
    TempDir dir;
    const std::string path = dir.file("share/trainbench/runs.db");
    RunSpec spec;
    spec.name = "first";
    RunWriter writer(path, spec);
    writer.finish(RunStatus::Completed, engine::RunSummary{});
    EXPECT_EQ(RunStore::open(path, OpenMode::ReadOnly).listRuns().size(), 1u);
}

TEST(RunStoreSchema, ReadOnlyNeverCreatesOrWrites) {
    TempDir dir;
    const std::string missing = dir.file("missing.db");
    const std::string message =
        storeErrorOf([&] { RunStore::open(missing, OpenMode::ReadOnly); });
    EXPECT_NE(message.find(missing), std::string::npos) << message;
    EXPECT_FALSE(std::filesystem::exists(missing));

    const std::string path = dir.file("runs.db");
    recordRun(path, 3);
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_TRUE(store.readOnly());
    EXPECT_EQ(store.listRuns().size(), 1u);
    EXPECT_THROW(store.renameRun(RunId{1}, "x"), StoreError);
    EXPECT_THROW(store.deleteRun(RunId{1}), StoreError);
    EXPECT_THROW(store.markInterruptedRuns(), StoreError);
    EXPECT_EQ(store.listRuns()[0].name, "run-1");
}

TEST(RunStoreSchema, NewerSchemaOpensReadOnlyAndRefusesWrites) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    recordRun(path, 4);
    const int newer = RunStore::latestSchemaVersion() + 1;
    {
        // What a future trainbench might have done: add a table and bump the version.
        RawDb raw(path);
        raw.exec("BEGIN; CREATE TABLE future_table (run_id INTEGER, text TEXT); "
                 "PRAGMA user_version = " + std::to_string(newer) + "; COMMIT");
    }

    RunStore store = RunStore::open(path);  // asked for read-write
    EXPECT_TRUE(store.readOnly());
    EXPECT_EQ(store.schemaVersion(), newer);
    const std::string reason = store.readOnlyReason();
    EXPECT_NE(reason.find(path), std::string::npos) << reason;
    EXPECT_NE(reason.find("newer"), std::string::npos) << reason;
    EXPECT_NE(reason.find("read-only"), std::string::npos) << reason;
    EXPECT_NE(reason.find(std::to_string(newer)), std::string::npos) << reason;

    // Reading still works...
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(store.steps(runs[0].id).size(), 4u);
    // ... writing does not.
    const std::string renameError = storeErrorOf([&] { store.renameRun(runs[0].id, "x"); });
    EXPECT_NE(renameError.find("newer"), std::string::npos) << renameError;
    EXPECT_THROW(store.deleteRun(runs[0].id), StoreError);
    EXPECT_THROW(store.markInterruptedRuns(), StoreError);
    const std::string writerError = storeErrorOf([&] { RunWriter writer(path, RunSpec{}); });
    EXPECT_NE(writerError.find("newer"), std::string::npos) << writerError;

    RawDb raw(path);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), newer);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(raw.text("SELECT name FROM runs"), "run-1");
}

TEST(RunStoreSchema, ForeignSqliteFileIsRejected) {
    TempDir dir;
    const std::string path = dir.file("other.db");
    {
        RawDb raw(path);
        raw.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    }
    const std::string message = storeErrorOf([&] { RunStore::open(path); });
    EXPECT_NE(message.find("not a trainbench run store"), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_schema"), 1);  // untouched
}

TEST(RunStoreSchema, WrongApplicationIdIsRejected) {
    TempDir dir;
    const std::string path = dir.file("other.db");
    {
        RawDb raw(path);
        raw.exec("PRAGMA application_id = 1234; PRAGMA user_version = 1; CREATE TABLE runs (x)");
    }
    const std::string message = storeErrorOf([&] { RunStore::open(path); });
    EXPECT_NE(message.find("not a trainbench run store (application_id"), std::string::npos)
        << message;
}

TEST(RunStoreSchema, RandomBytesGiveAClearError) {
    TempDir dir;
    const std::string path = dir.file("garbage.db");
    writeRandomBytes(path, 16384);
    for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        const std::string message = storeErrorOf([&] { RunStore::open(path, mode); });
        EXPECT_EQ(message, path + ": file is not a database");
    }
    EXPECT_THROW(RunWriter(path, RunSpec{}, RunWriterOptions{}), StoreError);
}

TEST(RunStoreSchema, DamagedPagesGiveAClearError) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    recordRun(path, 3000);  // several pages of steps
    const auto size = std::filesystem::file_size(path);
    ASSERT_GT(size, 8 * 4096u);
    // Keep page 1 (header and schema), scramble the rest: every table's pages are now garbage.
    writeRandomBytes(path, size - 4096, 4096);

    const std::string message = storeErrorOf([&] {
        RunStore store = RunStore::open(path);
        for (const RunRow& row : store.listRuns()) store.steps(row.id);
    });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("malformed"), std::string::npos) << message;
}

}  // namespace
}  // namespace trainbench::profiler
