#pragma once
// One SQLite connection to a run store file, owned by one thread at a time. Every failure becomes
// a StoreError that names the file and quotes SQLite's message. Statements used over and over are
// prepared once and kept here (cached()).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "profiler/store/statement.h"

struct sqlite3;

namespace trainbench::profiler {

// The store's timestamp of "now" as an SQL expression: ISO-8601 UTC with milliseconds, which
// sorts as text (started_at, ended_at, applied_at, measured_at).
inline constexpr std::string_view kSqlNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

class Database {
public:
    enum class Access { ReadOnly, ReadWrite };

    // ReadWrite creates the file (not its folder); ReadOnly requires it to exist.
    Database(std::string path, Access access);
    ~Database();

    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }

    // Runs one or more statements that return no rows.
    void exec(std::string_view sql);

    // A statement prepared once per connection and reused; it comes back reset with no bindings.
    Statement& cached(std::string_view sql);

    int64_t lastInsertRowId() const;
    int changes() const;

    // Throws StoreError("<path>: <sqlite message>[ (<context>)]") for result code rc.
    [[noreturn]] void fail(int rc, std::string_view context = {}) const;

private:
    std::string path_;
    sqlite3* db_ = nullptr;
    std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

}  // namespace trainbench::profiler
