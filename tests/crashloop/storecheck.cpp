#include "tests/crashloop/storecheck.h"

#include <filesystem>
#include <map>

#include "profiler/store/runstatus.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "tests/profiler/storetestutil.h"

namespace trainbench::crashloop {

namespace {

using profiler::testutil::RawDb;
using Value = std::optional<std::string>;

std::string text(const Value& v) { return v.value_or("NULL"); }
std::string runName(int64_t id) { return "run " + std::to_string(id); }

// The file as SQLite sees it, before any trainbench code has opened it.
void checkFile(RawDb& raw, const std::string& db, CrashReport& report) {
    const auto integrity = raw.rows("PRAGMA integrity_check");
    if (integrity.size() != 1 || integrity[0][0] != "ok") {
        std::string all;
        for (const auto& row : integrity) all += (all.empty() ? "" : "; ") + text(row[0]);
        report.violation(db + ": PRAGMA integrity_check: " + all);
    }
    for (const auto& row : raw.rows("PRAGMA foreign_key_check"))
        report.violation(db + ": PRAGMA foreign_key_check: row " + text(row[1]) + " of " + text(row[0]) +
                         " refers to a missing row of " + text(row[2]));
}

// Steps run 1, 2, ... n (from the step after the checkpoint a job resumed at); evaluations only at
// recorded steps.
void checkSteps(profiler::RunStore& store, const profiler::RunRow& run, CrashReport& report) {
    const std::string who = runName(run.id.value);
    int64_t first = 1;
    for (const auto& [key, value] : store.attributes(run.id))
        if (key == "job.resumed_from_step") first = std::stoll(value) + 1;
    const auto steps = store.steps(run.id);
    for (size_t i = 0; i < steps.size(); ++i) {
        const int64_t expected = first + static_cast<int64_t>(i);
        if (steps[i].step != expected) {
            report.violation(who + ": steps not contiguous: step " + std::to_string(steps[i].step) + " where step " +
                             std::to_string(expected) + " belongs (" + std::to_string(steps.size()) + " steps stored)");
            break;
        }
    }
    const int64_t last = steps.empty() ? 0 : steps.back().step;
    for (const profiler::EvalSample& e : store.evals(run.id))
        if (steps.empty() || e.step < first || e.step > last)
            report.violation(who + ": evaluation at step " + std::to_string(e.step) + ", which is not recorded (steps " +
                             (steps.empty() ? "none" : std::to_string(first) + "-" + std::to_string(last)) + ")");
}

// What the file itself says about each run, once the product has read (and marked) it.
void checkStoredStatuses(RawDb& raw, const std::vector<profiler::RunRow>& runs, CrashReport& report) {
    const auto rows = raw.rows(
        "SELECT id, status, ended_at IS NULL, message IS NULL, steps, "
        "(SELECT max(step) FROM steps s WHERE s.run_id = r.id), (SELECT count(*) FROM steps s WHERE s.run_id = r.id), "
        "stop_reason IS NULL FROM runs r ORDER BY id");
    std::map<int64_t, std::string> listed;
    for (const profiler::RunRow& run : runs) listed[run.id.value] = std::string(profiler::runStatusName(run.status));
    for (const auto& row : rows) {
        const std::string who = runName(std::stoll(*row[0]));
        const std::string status = text(row[1]);
        if (listed[std::stoll(*row[0])] != status)
            report.violation(who + ": listed as " + listed[std::stoll(*row[0])] + " but stored as '" + status + "'");
        if (status == "interrupted") {
            if (row[2] != "1") report.violation(who + ": interrupted, yet ended_at is set");
            if (row[3] != "0") report.violation(who + ": interrupted without a message");
            if (row[4] != row[5])
                report.violation(who + ": interrupted with steps = " + text(row[4]) + " but its last stored step is " +
                                 text(row[5]));
        } else if (status == "completed") {
            if (row[2] != "0") report.violation(who + ": completed without ended_at");
            if (row[7] != "0") report.violation(who + ": completed without a stop_reason");
            if (row[4] != row[5] || row[4] != row[6])
                report.violation(who + ": completed with steps = " + text(row[4]) + ", but " + text(row[6]) +
                                 " steps are stored, the last " + text(row[5]));
        }
    }
    // Rows of per-step tables must belong to a recorded step.
    for (const char* table : {"input_stages", "replica_steps", "ps_updates"}) {
        const std::string t = table;
        for (const auto& row : raw.rows("SELECT run_id, step FROM " + t + " x WHERE NOT EXISTS (SELECT 1 FROM steps s "
                                        "WHERE s.run_id = x.run_id AND s.step = x.step) LIMIT 5"))
            report.violation(runName(std::stoll(*row[0])) + ": " + t + " has step " + text(row[1]) + ", which is not recorded");
    }
}

}  // namespace

StoreFacts checkStore(const std::string& db, const CrashState& before, CrashState& after, CrashReport& report) {
    StoreFacts facts;
    if (!std::filesystem::exists(db)) {
        if (!before.runs.empty()) report.violation(db + ": the run store is gone");
        report.fact("store", "absent");
        return facts;
    }
    std::map<int64_t, std::string> rawStatus;
    {
        RawDb raw(db);
        checkFile(raw, db, report);
        if (raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'runs'") > 0)
            for (const auto& row : raw.rows("SELECT id, status FROM runs"))
                rawStatus[std::stoll(*row[0])] = text(row[1]);
    }
    std::vector<profiler::RunRow> runs;
    try {
        profiler::RunStore store = profiler::RunStore::open(db, profiler::OpenMode::ReadWrite);
        runs = store.listRuns();
        for (const profiler::RunRow& run : runs) {
            const std::string status(profiler::runStatusName(run.status));
            if (run.status != profiler::RunStatus::Completed && run.status != profiler::RunStatus::Interrupted)
                report.violation(runName(run.id.value) + ": " + status + ", neither completed nor interrupted: " +
                                 run.message.value_or("(no message)"));
            checkSteps(store, run, report);
            RunSeen& seen = after.runs[run.id.value];
            seen = {status, static_cast<int64_t>(store.steps(run.id).size()),
                    static_cast<int64_t>(store.evals(run.id).size())};
            after.lastRun = std::max(after.lastRun, run.id.value);
            if (run.id.value > before.lastRun) {
                facts.newRuns.push_back(run);
                facts.rawStatusBefore.push_back(rawStatus.count(run.id.value) ? rawStatus[run.id.value] : "?");
                int64_t planned = 0;
                for (const auto& [key, value] : store.attributes(run.id))
                    if (key == "plan.total_steps") planned = std::stoll(value);
                facts.plannedSteps.push_back(planned);
            }
        }
    } catch (const profiler::StoreError& e) {
        report.violation("the product cannot read the store: " + std::string(e.what()));
        return facts;
    }
    {
        RawDb raw(db);
        checkStoredStatuses(raw, runs, report);
        // Where an uninterrupted run spends its time: what random kills hit in proportion.
        const auto time = raw.rows(
            "SELECT round(sum(train_seconds), 1), round(sum(eval_seconds), 1), round((SELECT sum(checkpoint_seconds) "
            "FROM steps s JOIN runs c ON c.id = s.run_id WHERE c.status = 'completed'), 1) FROM runs "
            "WHERE status = 'completed'");
        report.fact("time_of_completed_runs", "training steps " + text(time[0][0]) + " s, evaluations " +
                                                  text(time[0][1]) + " s, checkpoints " + text(time[0][2]) + " s");
    }
    for (const auto& [id, was] : before.runs) {
        const auto now = after.runs.find(id);
        if (now == after.runs.end()) {
            report.violation(runName(id) + " (" + was.status + ", " + std::to_string(was.steps) + " steps) is gone");
            continue;
        }
        const RunSeen& is = now->second;
        if (is.status != was.status || is.steps != was.steps || is.evals != was.evals)
            report.violation(runName(id) + " changed after it was checked: was " + was.status + " with " +
                             std::to_string(was.steps) + " steps and " + std::to_string(was.evals) + " evaluations, now " +
                             is.status + " with " + std::to_string(is.steps) + " and " + std::to_string(is.evals));
    }
    report.fact("runs", std::to_string(runs.size()));
    return facts;
}

}  // namespace trainbench::crashloop
