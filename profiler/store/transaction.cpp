#include "profiler/store/transaction.h"

#include <sqlite3.h>

#include "profiler/store/database.h"

namespace trainbench::profiler {

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (done_) return;
    // After SQLITE_FULL or an I/O error SQLite may already have rolled back by itself; a second
    // ROLLBACK would only fail with "no transaction is active".
    if (sqlite3_get_autocommit(db_.handle()) == 0) {
        sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    done_ = true;
}

}  // namespace trainbench::profiler
