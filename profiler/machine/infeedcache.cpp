#include "profiler/machine/infeedcache.h"

#include <sqlite3.h>

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
    if (storePath.empty()) throw StoreError("run store path is empty");
    const std::string host = currentHost();
    Database db(storePath, Database::Access::ReadWrite);
    const bool fileWritable = sqlite3_db_readonly(db.handle(), "main") == 0;
    const SchemaState schema = Schema::prepare(db, fileWritable);
    const bool usable = schema.version >= kInfeedSchemaVersion;
    if (usable) {
        Statement& q = db.cached(
            "SELECT seconds_per_batch, measured_at FROM infeed_rates WHERE host = ?1 AND pipeline = ?2 AND "
            "global_batch = ?3");
        Statement::ResetGuard guard(q);
        q.bindText(1, std::string_view(host)).bindText(2, std::string_view(pipeline)).bindInt(3, globalBatch);
        if (q.step()) return {q.columnDouble(0), q.columnText(1), true};
    }
    InfeedRate rate{measure(), utcNow(), false};
    if (usable && !schema.readOnly) {
        Transaction transaction(db);
        Statement& insert = db.cached(
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
