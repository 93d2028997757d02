#include "profiler/store/schema.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "profiler/store/currentschemaviews.h"
#include "profiler/store/database.h"
#include "profiler/store/migrations.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

std::string hex(int64_t value) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%08llX",
                  static_cast<unsigned long long>(static_cast<uint32_t>(value)));
    return text;
}

struct Header {
    int64_t applicationId = 0;
    int64_t version = 0;
    int64_t objects = 0;  // tables, indexes, ... in sqlite_schema
};

// One statement, so one snapshot: read separately, a concurrent process creating the schema
// could commit in between and we would see, say, tables but no version yet.
Header readHeader(Database& db) {
    Statement& query = db.cached(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
    Statement::ResetGuard guard(query);
    Header header;
    if (query.step()) {
        header.applicationId = query.columnInt(0);
        header.version = query.columnInt(1);
        header.objects = query.columnInt(2);
    }
    return header;
}

// Switching a file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// without the busy handler, when another connection holds any lock (as when several processes
// create the same new store). So wait here; once one of them has switched, the rest find "wal".
std::string switchToWal(Database& db) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
        try {
            Statement journal(db, "PRAGMA journal_mode = WAL");
            Statement::ResetGuard guard(journal);
            return journal.step() ? journal.columnText(0) : std::string();
        } catch (const StoreError& error) {
            if (error.sqliteCode() != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) {
                throw;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace

int Schema::latestVersion() { return migrations().back().version; }

SchemaState Schema::prepare(Database& db, bool writable) {
    // The first read of the file: a file of random bytes fails here with "file is not a database".
    const Header header = readHeader(db);
    const int64_t applicationId = header.applicationId;
    const int64_t version = header.version;
    const int latest = latestVersion();

    if (version == 0) {
        if (header.objects > 0) {
            throw StoreError(db.path() +
                             ": not a trainbench run store (it holds tables but no run-store "
                             "schema version)");
        }
    } else if (applicationId != kApplicationId) {
        throw StoreError(db.path() + ": not a trainbench run store (application_id " +
                         hex(applicationId) + ", expected " + hex(kApplicationId) + ")");
    }

    SchemaState state;
    state.version = static_cast<int>(version);
    if (version > latest) {
        state.readOnly = true;
        state.readOnlyReason = db.path() + ": run-store schema version " + std::to_string(version) +
                               " is newer than this trainbench knows (" + std::to_string(latest) +
                               "); opened read-only, use a newer trainbench to record runs in it";
    } else if (!writable) {
        state.readOnly = true;
        if (version == 0) {
            state.readOnlyReason = db.path() + ": not a run store yet (empty database); opened read-only";
        } else if (version < latest) {
            state.readOnlyReason = db.path() + ": run-store schema version " + std::to_string(version) +
                                   " is older than this trainbench's (" + std::to_string(latest) +
                                   "); read as it is, without upgrading it";
        } else {
            state.readOnlyReason = db.path() + ": opened read-only";
        }
        // Reading an older (or empty) file must not upgrade it: views make it read as the current
        // schema, the file stays as it was.
        if (version < latest) CurrentSchemaViews::install(db);
    }
    if (state.readOnly) {
        // Belt and braces: even a stray write through this connection is refused by SQLite.
        db.exec("PRAGMA query_only = ON");
        return state;
    }

    // WAL lets readers (the GUI, `trainbench-cli list`) run while a run writes. It is a property
    // of the file and needs the write lock once, hence only on writable connections.
    const std::string mode = switchToWal(db);
    if (mode != "wal") {
        throw StoreError(db.path() + ": cannot use write-ahead logging (journal mode stays '" +
                         mode + "'); a run store must live on a local file system");
    }
    // NORMAL is durable against process crashes in WAL mode; only a power loss can drop the
    // last commits, and the file stays consistent either way.
    db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
    migrate(db);
    state.version = static_cast<int>(readHeader(db).version);
    return state;
}

void Schema::migrate(Database& db) {
    for (const Migration& migration : migrations()) {
        if (readHeader(db).version >= migration.version) continue;
        Transaction transaction(db);
        // Re-read under the write lock: another process may have migrated since the check above.
        const Header current = readHeader(db);
        if (current.version >= migration.version) continue;
        if (current.version == 0 && current.objects > 0) {
            throw StoreError(db.path() + ": not a trainbench run store (tables appeared while "
                                         "creating the schema)");
        }
        db.exec(migration.sql);
        Statement record(db, "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?1, ?2, " +
                                 std::string(kSqlNow) + ")");
        record.bindInt(1, migration.version).bindText(2, migration.description).run();
        // PRAGMA values cannot be bound; both are integers we format ourselves.
        db.exec("PRAGMA user_version = " + std::to_string(migration.version));
        db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
        transaction.commit();
    }
}

}  // namespace trainbench::profiler
