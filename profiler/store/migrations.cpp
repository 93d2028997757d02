#include "profiler/store/migrations.h"

// The SQL lives in resources/migrations/NNNN_*.sql, one file per schema version, embedded at build
// time (cmake/EmbedMigrations.cmake), so the store never depends on files at run time.
#include "profiler/store/migrationsql.h"

namespace trainbench::profiler {

std::span<const Migration> migrations() { return embedded::kMigrations; }

}  // namespace trainbench::profiler
