#pragma once
// The run store as the host caches (machines, host_models, infeed_rates) open it: read-write, its
// schema brought up to date when the file can be written. A write-protected file, or one from a
// newer trainbench, is used read-only: a figure is then measured and returned but not saved.
#include <string>

#include "profiler/store/database.h"
#include "profiler/store/schema.h"

namespace trainbench::profiler {

struct CacheStore {
    // Throws StoreError for an empty path or a file that is not a run store.
    explicit CacheStore(const std::string& path);

    // Whether the cache's table is there (the store's schema has reached `version`).
    bool has(int version) const { return schema.version >= version; }
    // Whether a measured figure can be saved in a table of schema `version`.
    bool canSave(int version) const { return !schema.readOnly && has(version); }

    Database db;
    SchemaState schema;
};

}  // namespace trainbench::profiler
