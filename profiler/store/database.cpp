#include "profiler/store/database.h"

#include <sqlite3.h>

#include <filesystem>

#include "profiler/store/storeerror.h"

namespace trainbench::profiler {

namespace {

// How long a connection waits for another connection's write lock before giving up with
// SQLITE_BUSY. Write transactions here are short (a batch of steps), so 5 s means something is
// wrong, not merely busy.
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

Database::Database(std::string path, Access access) : path_(std::move(path)) {
    if (access == Access::ReadOnly && !std::filesystem::exists(path_)) {
        throw StoreError(path_ + ": no such run store", SQLITE_CANTOPEN);
    }
    if (access == Access::ReadWrite) {
        // A first run on a new machine records into ~/.local/share/trainbench/, which may not exist.
        const auto folder = std::filesystem::path(path_).parent_path();
        std::error_code error;
        if (!folder.empty()) std::filesystem::create_directories(folder, error);
        if (error) {
            throw StoreError(path_ + ": cannot create folder " + folder.string() + ": " + error.message(),
                             SQLITE_CANTOPEN);
        }
    }
    const int flags = access == Access::ReadOnly ? SQLITE_OPEN_READONLY
                                                 : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw StoreError(path_ + ": cannot open: " + message, rc);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

Database::~Database() {
    cache_.clear();  // statements must be finalized before the connection closes
    sqlite3_close_v2(db_);
}

void Database::exec(std::string_view sql) {
    const std::string text(sql);
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        const std::string message = error != nullptr ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        throw StoreError(path_ + ": " + message, rc);
    }
}

Statement& Database::cached(std::string_view sql) {
    auto it = cache_.find(std::string(sql));
    if (it == cache_.end()) {
        it = cache_.emplace(std::string(sql), std::make_unique<Statement>(*this, sql, true)).first;
    } else {
        it->second->reset();
    }
    return *it->second;
}

int64_t Database::lastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int Database::changes() const { return sqlite3_changes(db_); }

void Database::fail(int rc, std::string_view context) const {
    // sqlite3_errmsg describes the most recent failure on this connection; fall back to the
    // generic text for codes that did not come from a call on it.
    std::string message = sqlite3_errcode(db_) == rc ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (!context.empty()) message += " (" + std::string(context) + ")";
    throw StoreError(path_ + ": " + message, rc);
}

}  // namespace trainbench::profiler
