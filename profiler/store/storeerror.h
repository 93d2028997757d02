#pragma once
// The run store's only exception type. Messages name the database file and carry SQLite's own
// error text ("runs.db: database disk image is malformed") so the CLI and GUI can show them as is.
#include <stdexcept>
#include <string>

namespace trainbench::profiler {

class StoreError : public std::runtime_error {
public:
    // sqliteCode is the SQLite result code behind the error (SQLITE_FULL, SQLITE_CORRUPT, ...),
    // or 0 when the error is the store's own (wrong file, read-only store, ...).
    explicit StoreError(const std::string& message, int sqliteCode = 0)
        : std::runtime_error(message), sqliteCode_(sqliteCode) {}

    int sqliteCode() const noexcept { return sqliteCode_; }

private:
    int sqliteCode_;
};

}  // namespace trainbench::profiler
