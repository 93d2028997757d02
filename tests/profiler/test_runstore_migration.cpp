// Stores written by every earlier schema version, with rows in every table: read-only they read as
// if migrated and the file does not change; opened read-write they migrate and keep every row,
// every value, with the new columns at their defaults. The shipped demo store is at the latest
// schema.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "tests/profiler/olderstore.h"

namespace trainbench::profiler {
namespace {

using testutil::contentOf;
using testutil::createStoreAtVersion;
using testutil::fileBytes;
using testutil::RawDb;
using testutil::TempDir;

// Everything the store's read API gives about every run, as text (doubles exact), to compare a
// read through CurrentSchemaViews with a read of the migrated file.
std::string readAll(RunStore& store) {
    std::ostringstream out;
    out.precision(17);
    for (const RunRow& run : store.listRuns()) {
        out << "run " << run.id.value << ' ' << run.name << ' ' << runStatusName(run.status) << ' ' << run.clock
            << ' ' << run.pid << ' ' << run.config_json << ' ' << run.verdict.value_or("-") << '\n';
        for (const auto& s : store.steps(run.id)) {
            out << " step " << s.step << ' ' << s.epoch << ' ' << s.loss << ' ' << s.step_seconds << ' '
                << s.input_seconds << ' ' << s.samples << ' ' << s.wall_seconds << ' ' << s.comm_seconds << ' '
                << s.forward_seconds << ' ' << s.other_seconds << ' ' << s.checkpoint_seconds << '\n';
        }
        for (const auto& e : store.evals(run.id))
            out << " eval " << e.step << ' ' << e.split << ' ' << e.loss << ' ' << e.accuracy << '\n';
        for (const auto& [key, value] : store.attributes(run.id)) out << " attr " << key << '=' << value << '\n';
        for (const auto& r : store.inputStages(run.id)) out << " stage " << r.step << ' ' << r.stage.stage << '\n';
        for (const auto& r : store.replicaSteps(run.id))
            out << " replica " << r.step << ' ' << r.replica.rank << ' ' << r.replica.forward_seconds << '\n';
        for (const auto& r : store.psUpdates(run.id)) out << " ps " << r.step << ' ' << r.update.server << '\n';
        for (const auto& r : store.opStats(run.id)) out << " op " << r.rank << ' ' << r.op.kind << '\n';
        out << " verdict " << store.verdict(run.id).has_value() << '\n';
    }
    return out.str();
}

// The declared default of each column of the latest schema (as SQL text; "NULL" if none).
std::map<std::string, std::map<std::string, std::string>> latestDefaults() {
    TempDir dir;
    const std::string path = dir.file("latest.db");
    RunStore::open(path);
    RawDb db(path);
    std::map<std::string, std::map<std::string, std::string>> out;
    for (const std::string& table : testutil::tablesOf(db)) {
        for (auto& row : db.textRows("SELECT name, coalesce(dflt_value, 'NULL') FROM pragma_table_info(" +
                                 testutil::quoted(table) + ")")) {
            out[table][row[0]] = row[1];
        }
    }
    return out;
}

TEST(RunStoreMigration, StoresOfEveryEarlierVersionMigrateKeepingEveryRow) {
    const int latest = RunStore::latestSchemaVersion();
    ASSERT_GE(latest, 2);
    const auto defaults = latestDefaults();
    for (int version = 1; version < latest; ++version) {
        SCOPED_TRACE("a store of schema version " + std::to_string(version));
        TempDir dir;
        const std::string path = dir.file("runs.db");
        createStoreAtVersion(path, version);
        {
            RawDb db(path);
            testutil::fillEveryTable(db, 3);
        }
        const testutil::StoreContent before = contentOf(path);
        for (const auto& [table, content] : before) {
            if (table != "schema_migrations") {
                EXPECT_EQ(content.rows.size(), 3u) << table;
            }
        }
        EXPECT_EQ(before.at("schema_migrations").rows.size(), static_cast<size_t>(version));

        // Read-only: read as the latest schema would, and the file is left exactly as it was.
        const std::string bytes = fileBytes(path);
        std::string readOnly;
        {
            RunStore store = RunStore::open(path, OpenMode::ReadOnly);
            EXPECT_EQ(store.schemaVersion(), version);
            EXPECT_TRUE(store.needsMigration());
            EXPECT_TRUE(store.readOnly());
            EXPECT_NE(store.readOnlyReason().find("older"), std::string::npos) << store.readOnlyReason();
            EXPECT_EQ(store.listRuns().size(), 3u);
            readOnly = readAll(store);
            EXPECT_FALSE(store.schemaChanged());
        }
        EXPECT_TRUE(fileBytes(path) == bytes) << "a read-only open changed the file";
        EXPECT_EQ(contentOf(path), before);

        // Read-write: migrated, and read the same.
        {
            RunStore store = RunStore::open(path, OpenMode::ReadWrite);
            EXPECT_EQ(store.schemaVersion(), latest);
            EXPECT_FALSE(store.needsMigration());
            EXPECT_EQ(readAll(store), readOnly);
        }
        RawDb db(path);
        EXPECT_EQ(db.integer("PRAGMA user_version"), latest);
        EXPECT_EQ(db.text("PRAGMA integrity_check"), "ok");
        EXPECT_EQ(db.text("PRAGMA foreign_key_check"), "");
        for (const auto& [table, content] : before) {
            const auto rows = testutil::rowsOf(db, table, content.columns);
            if (table == "schema_migrations") {
                EXPECT_EQ(rows.size(), static_cast<size_t>(latest));
                EXPECT_TRUE(std::includes(rows.begin(), rows.end(), content.rows.begin(), content.rows.end()));
                continue;
            }
            EXPECT_EQ(rows, content.rows) << table << ": rows changed by the migration";
            // Columns the migrations added hold their declared default in the rows that were there.
            for (const auto& [column, value] : defaults.at(table)) {
                if (std::find(content.columns.begin(), content.columns.end(), column) != content.columns.end()) continue;
                EXPECT_EQ(db.integer("SELECT count(*) FROM \"" + table + "\" WHERE \"" + column + "\" IS NOT " + value), 0)
                    << table << "." << column;
            }
        }
        for (const auto& [table, columns] : defaults) {
            if (!before.count(table)) {
                EXPECT_EQ(db.integer("SELECT count(*) FROM \"" + table + "\""), 0) << table;
            }
        }
    }
}

TEST(RunStoreMigration, AnOlderStoreReadsDeadRunsAsInterruptedWithoutWriting) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    const int version = RunStore::latestSchemaVersion() - 2;
    createStoreAtVersion(path, version);
    ProcessIdentity writer = ProcessIdentity::current();
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    writer.pid = child;  // reaped: no such process any more
    const int64_t id = testutil::insertRunningRow(path, writer, 4);
    const std::string bytes = fileBytes(path);

    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const auto row = store.run(RunId{id});
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, RunStatus::Interrupted);
    EXPECT_EQ(row->steps, 4);
    EXPECT_EQ(row->clock, "wall");  // a column of a later schema, at its default
    EXPECT_EQ(store.listRuns().at(0).status, RunStatus::Interrupted);
    EXPECT_EQ(store.steps(RunId{id}).size(), 4u);
    EXPECT_THROW(store.renameRun(RunId{id}, "x"), StoreError);
    EXPECT_TRUE(fileBytes(path) == bytes);
    RawDb raw(path);
    EXPECT_EQ(raw.text("SELECT status FROM runs"), "running");
    EXPECT_EQ(raw.integer("PRAGMA user_version"), version);
}

TEST(RunStoreMigration, AReaderNoticesWhenAnotherProcessMigratesTheFile) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    createStoreAtVersion(path, RunStore::latestSchemaVersion() - 1);
    RunStore reader = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_FALSE(reader.schemaChanged());
    RunStore::open(path, OpenMode::ReadWrite);
    EXPECT_TRUE(reader.schemaChanged());
    EXPECT_FALSE(RunStore::open(path, OpenMode::ReadOnly).needsMigration());
}

TEST(RunStoreMigration, AnEmptyFileReadsAsAStoreWithNoRunsAndStaysEmpty) {
    TempDir dir;
    const std::string path = dir.file("empty.db");
    std::fclose(std::fopen(path.c_str(), "w"));
    {
        RunStore store = RunStore::open(path, OpenMode::ReadOnly);
        EXPECT_EQ(store.schemaVersion(), 0);
        EXPECT_FALSE(store.needsMigration());  // nothing to migrate: the first writer creates it
        EXPECT_TRUE(store.listRuns().empty());
    }
    EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(RunStoreMigration, TheDemoStoreHasTheLatestSchema) {
    const std::string path = std::string(TRAINBENCH_SOURCE_DIR) + "/resources/demo/runs.db";
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.schemaVersion(), RunStore::latestSchemaVersion())
        << path << " is behind this trainbench's schema: rebuild it with scripts/make-demo-store.sh, or "
        << "migrate it (open it read-write once) and VACUUM it";
    EXPECT_FALSE(store.listRuns().empty());
    // Shipped in rollback-journal mode (header bytes 18 and 19 are 1, WAL would be 2): one
    // self-contained file beside which readers (the GUI's --screenshot) create no -wal and -shm.
    const std::string header = fileBytes(path).substr(0, 20);
    EXPECT_EQ(header[18], 1);
    EXPECT_EQ(header[19], 1);
}

}  // namespace
}  // namespace trainbench::profiler
