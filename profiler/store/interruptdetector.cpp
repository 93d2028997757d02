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

bool InterruptDetector::recordJobFailure(Database& db, const ProcessIdentity& writer, const std::string& cause,
                                         const std::string& othersCause) {
    Transaction transaction(db);
    std::optional<RunId> id;
    std::string status;
    std::optional<std::string> message;
    {
        // IS: a writer without /proc has no start time or boot id, and neither has its row.
        Statement& query = db.cached(
            "SELECT id, status, message FROM runs WHERE host = ?1 AND pid = ?2 AND proc_start IS ?3 "
            "AND boot_id IS ?4 ORDER BY id DESC LIMIT 1");
        Statement::ResetGuard guard(query);
        query.bindText(1, std::string_view(writer.host)).bindInt(2, writer.pid);
        query.bindInt(3, writer.proc_start).bindText(4, writer.boot_id);
        if (!query.step()) return false;
        id = RunId{query.columnInt(0)};
        status = query.columnText(1);
        message = query.optionalText(2);
    }
    if (status == "running" && ProcessIdentity::isAlive(writer.pid, writer.proc_start)) return false;
    Statement* update = nullptr;
    std::string text;
    if ((status == "running" || status == "interrupted") && !cause.empty()) {
        const std::optional<int64_t> lastStep = lastStepOf(db, *id);
        text = "job failed " + afterWhat(lastStep) + ": " + cause;
        update = &db.cached("UPDATE runs SET status = 'failed', message = ?2, steps = coalesce(steps, ?3), "
                            "ended_at = coalesce(ended_at, " + std::string(kSqlNow) + ") WHERE id = ?1");
        update->reset();
        update->bindInt(1, id->value).bindText(2, std::string_view(text)).bindInt(3, lastStep);
    } else if (status == "failed" && !othersCause.empty()) {
        const std::string own = message.value_or("");
        if (own.find(othersCause) != std::string::npos) return false;  // recorded already
        text = own.empty() ? "job failed: " + othersCause : own + "; in the job, " + othersCause;
        update = &db.cached("UPDATE runs SET message = ?2 WHERE id = ?1");
        update->reset();
        update->bindInt(1, id->value).bindText(2, std::string_view(text));
    } else {
        return false;  // completed or stopped (the job's end did not fail the run), or nothing to add
    }
    update->run();
    transaction.commit();
    return true;
}

}  // namespace trainbench::profiler
