#include "profiler/store/statement.h"

#include <sqlite3.h>

#include <limits>

#include "profiler/store/database.h"

namespace trainbench::profiler {

Statement::Statement(const Database& db, std::string_view sql, bool persistent) : db_(db) {
    const unsigned flags = persistent ? SQLITE_PREPARE_PERSISTENT : 0;
    const int rc = sqlite3_prepare_v3(db_.handle(), sql.data(), static_cast<int>(sql.size()),
                                      flags, &stmt_, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt_);
        stmt_ = nullptr;
        db_.fail(rc);
    }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check(int rc, std::string_view what) const {
    if (rc != SQLITE_OK) db_.fail(rc, what);
}

Statement& Statement::bindInt(int index, int64_t value) {
    check(sqlite3_bind_int64(stmt_, index, value), "bind");
    return *this;
}

Statement& Statement::bindDouble(int index, double value) {
    check(sqlite3_bind_double(stmt_, index, value), "bind");
    return *this;
}

Statement& Statement::bindText(int index, std::string_view value) {
    check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8),
          "bind");
    return *this;
}

Statement& Statement::bindNull(int index) {
    check(sqlite3_bind_null(stmt_, index), "bind");
    return *this;
}

Statement& Statement::bindInt(int index, const std::optional<int64_t>& value) {
    return value ? bindInt(index, *value) : bindNull(index);
}

Statement& Statement::bindDouble(int index, const std::optional<double>& value) {
    return value ? bindDouble(index, *value) : bindNull(index);
}

Statement& Statement::bindText(int index, const std::optional<std::string>& value) {
    return value ? bindText(index, std::string_view(*value)) : bindNull(index);
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    // Read the message before reset: reset keeps the code but we do not want to rely on it.
    try {
        db_.fail(rc);
    } catch (...) {
        sqlite3_reset(stmt_);
        throw;
    }
}

void Statement::run() {
    ResetGuard guard(*this);
    while (step()) {
    }
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

bool Statement::isNull(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::columnInt(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::columnDouble(int column) const {
    if (isNull(column)) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, column);
}

std::string Statement::columnText(int column) const {
    const auto* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(text),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> Statement::optionalInt(int column) const {
    if (isNull(column)) return std::nullopt;
    return columnInt(column);
}

std::optional<double> Statement::optionalDouble(int column) const {
    if (isNull(column)) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
}

std::optional<std::string> Statement::optionalText(int column) const {
    if (isNull(column)) return std::nullopt;
    return columnText(column);
}

}  // namespace trainbench::profiler
