#include "profiler/machine/infeedcache.h"

#include "profiler/machine/cachestore.h"
#include "profiler/machine/calibration.h"
#include "profiler/store/database.h"
#include "profiler/store/schema.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {
constexpr int kInfeedSchemaVersion = 7;  // 0007_host_models.sql
}  // namespace

InfeedRate infeedRateFor(const std::string& storePath, const std::string& pipeline, int64_t globalBatch,
                         const std::function<double()>& measure) {
    CacheStore store(storePath);
    const std::string host = currentHost();
    if (store.has(kInfeedSchemaVersion)) {
        Statement& q = store.db.cached(
            "SELECT seconds_per_batch, measured_at FROM infeed_rates WHERE host = ?1 AND pipeline = ?2 AND "
            "global_batch = ?3");
        Statement::ResetGuard guard(q);
        q.bindText(1, std::string_view(host)).bindText(2, std::string_view(pipeline)).bindInt(3, globalBatch);
        if (q.step()) return {q.columnDouble(0), q.columnText(1), true};
    }
    InfeedRate rate{measure(), utcNow(), false};
    if (store.canSave(kInfeedSchemaVersion)) {
        Transaction transaction(store.db);
        Statement& insert = store.db.cached(
            "INSERT OR REPLACE INTO infeed_rates (host, pipeline, global_batch, seconds_per_batch, measured_at) "
            "VALUES (?1, ?2, ?3, ?4, ?5)");
        insert.bindText(1, std::string_view(host))
            .bindText(2, std::string_view(pipeline))
            .bindInt(3, globalBatch)
            .bindDouble(4, rate.seconds_per_batch)
            .bindText(5, std::string_view(rate.measured_at));
        insert.run();
        transaction.commit();
    }
    return rate;
}

}  // namespace trainbench::profiler
