#pragma once
// A prepared SQLite statement with typed bind and column helpers. Indices follow SQLite: bind
// parameters count from 1, result columns from 0. A NaN double is stored as NULL by SQLite, so a
// NULL read with columnDouble() comes back as NaN.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3_stmt;

namespace trainbench::profiler {

class Database;

class Statement {
public:
    Statement(const Database& db, std::string_view sql, bool persistent = false);
    ~Statement();

    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bindInt(int index, int64_t value);
    Statement& bindDouble(int index, double value);
    Statement& bindText(int index, std::string_view value);
    Statement& bindNull(int index);
    Statement& bindInt(int index, const std::optional<int64_t>& value);
    Statement& bindDouble(int index, const std::optional<double>& value);
    Statement& bindText(int index, const std::optional<std::string>& value);

    // Advances: true when a row is ready, false when done. Throws StoreError on failure (and
    // resets the statement so it releases its locks).
    bool step();
    // Steps a statement that returns no rows to completion, then resets it.
    void run();
    // Releases the statement's read snapshot and clears bindings; call when done with the rows.
    void reset();

    bool isNull(int column) const;
    int64_t columnInt(int column) const;
    double columnDouble(int column) const;
    std::string columnText(int column) const;
    std::optional<int64_t> optionalInt(int column) const;
    std::optional<double> optionalDouble(int column) const;
    std::optional<std::string> optionalText(int column) const;

    // Resets the statement when it goes out of scope, also on an exception, so no read
    // transaction stays open on a reused statement (in WAL mode that would pin an old snapshot).
    class ResetGuard {
    public:
        explicit ResetGuard(Statement& statement) : statement_(statement) {}
        ~ResetGuard() { statement_.reset(); }
        ResetGuard(const ResetGuard&) = delete;
        ResetGuard& operator=(const ResetGuard&) = delete;

    private:
        Statement& statement_;
    };

private:
    void check(int rc, std::string_view what) const;

    const Database& db_;
    sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace trainbench::profiler
