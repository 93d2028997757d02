#include "profiler/machine/cachestore.h"

#include <sqlite3.h>

#include "profiler/store/storeerror.h"

namespace trainbench::profiler {

namespace {
const std::string& nonEmpty(const std::string& path) {
    if (path.empty()) throw StoreError("run store path is empty");
    return path;
}
}  // namespace

// SQLite quietly opens a write-protected file read-only even when asked for read-write: the schema
// is only migrated when the file really can be written.
CacheStore::CacheStore(const std::string& path)
    : db(nonEmpty(path), Database::Access::ReadWrite),
      schema(Schema::prepare(db, sqlite3_db_readonly(db.handle(), "main") == 0)) {}

}  // namespace trainbench::profiler
