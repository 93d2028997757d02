#include "profiler/machine/machinecache.h"

#include <cmath>
#include <stdexcept>

#include "profiler/machine/cachestore.h"
#include "profiler/machine/calibration.h"
#include "profiler/machine/calibrationlock.h"
#include "profiler/store/database.h"
#include "profiler/store/schema.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

// Migration 0005_profiler.sql creates the machines table.
constexpr int kMachinesSchemaVersion = 5;

bool positive(double value) { return std::isfinite(value) && value > 0.0; }

}  // namespace

std::optional<MachineRoofs> cachedRoofs(Database& db, const std::string& host, int threads) {
    Statement& query = db.cached(
        "SELECT cpu_model, peak_gflops, bandwidth_gbs, measured_at, details_json FROM machines "
        "WHERE host = ?1 AND threads = ?2");
    Statement::ResetGuard guard(query);
    query.bindText(1, std::string_view(host)).bindInt(2, threads);
    if (!query.step()) return std::nullopt;
    MachineRoofs roofs;
    roofs.host = host;
    roofs.threads = threads;
    roofs.cpu_model = query.optionalText(0).value_or("");
    roofs.peak_gflops = query.columnDouble(1);
    roofs.bandwidth_gbs = query.columnDouble(2);
    roofs.measured_at = query.columnText(3);
    roofs.details_json = query.columnText(4);
    return roofs;
}

void saveRoofs(Database& db, const MachineRoofs& roofs) {
    // A zero or NaN roof would make every later run's roofline meaningless until remeasured.
    if (roofs.host.empty()) throw std::invalid_argument("machine roofs without a host name");
    if (roofs.threads <= 0) throw std::invalid_argument("machine roofs without a thread count");
    if (!positive(roofs.peak_gflops) || !positive(roofs.bandwidth_gbs)) {
        throw std::invalid_argument("machine roofs of " + roofs.host + " are not positive (peak " +
                                    std::to_string(roofs.peak_gflops) + " GFLOP/s, bandwidth " +
                                    std::to_string(roofs.bandwidth_gbs) + " GB/s)");
    }
    Transaction transaction(db);
    Statement& insert = db.cached(
        "INSERT OR REPLACE INTO machines (host, threads, cpu_model, peak_gflops, bandwidth_gbs, "
        "measured_at, details_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert.bindText(1, std::string_view(roofs.host))
        .bindInt(2, roofs.threads)
        .bindText(3, std::string_view(roofs.cpu_model))
        .bindDouble(4, roofs.peak_gflops)
        .bindDouble(5, roofs.bandwidth_gbs)
        .bindText(6, std::string_view(roofs.measured_at))
        .bindText(7, std::string_view(roofs.details_json.empty() ? "{}" : roofs.details_json));
    insert.run();
    transaction.commit();
}

MachineRoofs roofsFor(const std::string& storePath, int threads, bool remeasure) {
    return roofsFor(storePath, threads, remeasure, measureRoofs);
}

MachineRoofs roofsFor(const std::string& storePath, int threads, bool remeasure,
                      const RoofsMeasurer& measure) {
    CacheStore store(storePath);
    threads = resolveThreads(threads);
    const std::string host = currentHost();

    auto lookup = [&]() -> std::optional<MachineRoofs> {
        if (!store.has(kMachinesSchemaVersion)) return std::nullopt;
        try {
            return cachedRoofs(store.db, host, threads);
        } catch (const StoreError&) {
            // A newer schema may have reshaped the table: measure rather than fail the run.
            if (!store.schema.readOnly) throw;
            return std::nullopt;
        }
    };
    if (!remeasure) {
        if (auto cached = lookup()) return *cached;
    }

    // Held until the row is saved, so a process waiting for it finds the row.
    const CalibrationLock lock;
    if (!remeasure) {
        if (auto cached = lookup()) return *cached;  // measured by another process while we waited
    }
    MachineRoofs roofs = measure(threads);
    // The row is keyed by what was asked for, whatever the measurer filled in.
    roofs.host = host;
    roofs.threads = threads;
    if (store.canSave(kMachinesSchemaVersion)) saveRoofs(store.db, roofs);
    return roofs;
}

}  // namespace trainbench::profiler
