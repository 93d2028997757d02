#pragma once
// The roofs of each host and thread count, kept in the run store's machines table so they are
// measured once, not at every run. Users see them with `sqlite3 runs.db 'SELECT * FROM machines'`.
#include <functional>
#include <optional>
#include <string>

#include "profiler/machine/machineinfo.h"

namespace trainbench::profiler {

class Database;

// Measures the roofs for a thread count: measureRoofs(), or a stand-in in tests.
using RoofsMeasurer = std::function<MachineRoofs(int threads)>;

// The stored roofs of host at this thread count, if any. Throws StoreError (e.g. a store older than
// schema version 5 has no machines table).
std::optional<MachineRoofs> cachedRoofs(Database& db, const std::string& host, int threads);

// Stores the roofs, replacing any row of the same host and thread count, in one transaction.
// Throws std::invalid_argument for roofs not worth keeping (no host, no threads, a roof that is not
// a positive number) and StoreError when the write fails.
void saveRoofs(Database& db, const MachineRoofs& roofs);

// The roofs of this host at `threads` (0: every core) for a run recording into the store at
// storePath: the cached row, or, when there is none or remeasure is set, a fresh measurement that
// is then saved. Opens the store as a run does (creating and migrating it). A store this binary
// can only read (newer schema, write-protected file) still answers from its cache, and otherwise
// gets a measurement that is returned without being saved. Measurements are serialised between
// processes (CalibrationLock), and a process that waited uses the row the other one saved.
// Throws StoreError when the store cannot be opened or is not a run store.
MachineRoofs roofsFor(const std::string& storePath, int threads, bool remeasure = false);
MachineRoofs roofsFor(const std::string& storePath, int threads, bool remeasure,
                      const RoofsMeasurer& measure);

}  // namespace trainbench::profiler
