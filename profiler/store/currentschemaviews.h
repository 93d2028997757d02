#pragma once
// Lets a read-only connection read a store of an older schema version as if it had been migrated,
// without changing the file. For every table of the current schema that the file lacks, or has
// fewer columns of, it creates a TEMP view of that name: temp objects shadow the file's for
// unqualified names, so every query of the store reads the view. A missing table reads empty; a
// missing column reads its declared default (NULL if none), which is exactly what migrating gives
// the rows already there, since migrations only add tables and columns (docs/run-store.md).
namespace trainbench::profiler {

class Database;

class CurrentSchemaViews {
public:
    // Creates the views on db (opened read-only, before query_only is set); returns how many.
    // Throws StoreError.
    static int install(Database& db);
};

}  // namespace trainbench::profiler
