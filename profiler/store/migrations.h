#pragma once
// The run store's schema history. Migration N takes a database from user_version N-1 to N; each
// is applied in its own transaction together with the version bump (see Schema). Migrations are
// forward-only and only ever ADD tables, columns and indexes, so an older trainbench can still
// read a newer file read-only.
#include <span>
#include <string_view>

namespace trainbench::profiler {

struct Migration {
    int version;                   // user_version after this step
    std::string_view description;  // recorded in schema_migrations
    std::string_view sql;          // one or more statements, no BEGIN/COMMIT
};

// All migrations, in order, versions 1, 2, 3, ...
std::span<const Migration> migrations();

}  // namespace trainbench::profiler
