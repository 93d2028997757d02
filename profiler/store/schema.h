#pragma once
// Recognises a run store, configures a connection to it and brings its schema up to date.
// A file is a run store when PRAGMA application_id is kApplicationId; its schema version is
// PRAGMA user_version. A version newer than this binary knows is opened read-only; reading never
// migrates (only a writable connection does).
#include <cstdint>
#include <string>

namespace trainbench::profiler {

class Database;

struct SchemaState {
    int version = 0;             // user_version after migrating
    bool readOnly = false;
    std::string readOnlyReason;  // empty unless readOnly
};

class Schema {
public:
    // "TrBn": marks a SQLite file as a trainbench run store (`file` reports it, too).
    static constexpr int32_t kApplicationId = 0x5472426E;

    static int latestVersion();

    // Checks the file is a run store (or an empty database), then:
    // writable: WAL journal, synchronous=NORMAL, foreign keys on, pending migrations applied;
    // otherwise, or when the file is newer than this binary: query_only, and a file older than
    // this binary (or empty) is read through CurrentSchemaViews, unchanged. Throws StoreError.
    static SchemaState prepare(Database& db, bool writable);

private:
    static void migrate(Database& db);
};

}  // namespace trainbench::profiler
