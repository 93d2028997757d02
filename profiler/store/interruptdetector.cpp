#include "profiler/store/interruptdetector.h"

#include "profiler/store/database.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

struct LiveRow {
    RunId id;
    int64_t pid = 0;
    std::optional<int64_t> procStart;
    std::optional<std::string> bootId;
};

std::string afterWhat(std::optional<int64_t> lastStep) {
    return lastStep ? "after step " + std::to_string(*lastStep) : "before its first step";
}

std::optional<int64_t> lastStepOf(Database& db, RunId id) {
    Statement& query = db.cached("SELECT max(step) FROM steps WHERE run_id = ?1");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    return query.step() ? query.optionalInt(0) : std::nullopt;
}

}  // namespace

std::vector<InterruptedRun> InterruptDetector::find(Database& db, const ProcessIdentity& self) {
    std::vector<LiveRow> live;
    {
        Statement& query = db.cached(
            "SELECT id, pid, proc_start, boot_id FROM runs "
            "WHERE status = 'running' AND host = ?1 ORDER BY id");
        Statement::ResetGuard guard(query);
        query.bindText(1, std::string_view(self.host));
        while (query.step()) {
            live.push_back({RunId{query.columnInt(0)}, query.columnInt(1), query.optionalInt(2),
                            query.optionalText(3)});
        }
    }

    std::vector<InterruptedRun> found;
    for (const LiveRow& row : live) {
        const bool rebooted = row.bootId && self.boot_id && *row.bootId != *self.boot_id;
        if (!rebooted && ProcessIdentity::isAlive(row.pid, row.procStart)) continue;
        InterruptedRun run;
        run.id = row.id;
        run.lastStep = lastStepOf(db, row.id);
        const std::string process = "process " + std::to_string(row.pid);
        run.message = rebooted ? "host " + self.host + " rebooted while " + process +
                                     " was running the run; it stopped " + afterWhat(run.lastStep)
                               : process + " ended without finishing the run (killed or crashed) " +
                                     afterWhat(run.lastStep);
        found.push_back(std::move(run));
    }
    return found;
}

int InterruptDetector::mark(Database& db, const ProcessIdentity& self) {
    const std::vector<InterruptedRun> found = find(db, self);
    if (found.empty()) return 0;
    int marked = 0;
    Transaction transaction(db);
    Statement& update = db.cached(
        "UPDATE runs SET status = 'interrupted', message = ?2, steps = coalesce(steps, ?3) "
        "WHERE id = ?1 AND status = 'running'");
    for (const InterruptedRun& run : found) {
        update.reset();
        update.bindInt(1, run.id.value).bindText(2, std::string_view(run.message))
            .bindInt(3, run.lastStep);
        update.run();
        marked += db.changes();
    }
    transaction.commit();
    return marked;
}

}  // namespace trainbench::profiler
