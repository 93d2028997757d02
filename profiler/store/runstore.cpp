#include "profiler/store/runstore.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "profiler/store/database.h"
#include "profiler/store/interruptdetector.h"
#include "profiler/store/schema.h"
#include "profiler/store/stepphasecolumns.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

// Column order of readRunRow(); keep the two together.
constexpr std::string_view kRunColumns =
    "id, name, status, experiment_file, config_json, strategy, devices, global_batch, threads, "
    "dataset, model, host, pid, proc_start, boot_id, started_at, ended_at, message, steps, "
    "epochs, final_loss, final_accuracy, best_accuracy, time_to_target, step_at_target, "
    "target_accuracy, train_seconds, eval_seconds, throughput, stop_reason, input_seconds, skipped_records, "
    "replicas, comm_seconds, wait_seconds, verdict, clock, host_seconds, device_type, device_count, "
    "price_per_device_hour, host_price_per_hour, cost, train_examples, data_fraction, param_count, warm_start_run, kind";

RunRow readRunRow(const Statement& q, const std::string& path, const RunStoreFolder& folder) {
    RunRow row;
    row.id = RunId{q.columnInt(0)};
    row.name = q.columnText(1);
    const std::string status = q.columnText(2);
    const auto parsed = parseRunStatus(status);
    if (!parsed) {
        throw StoreError(path + ": run " + std::to_string(row.id.value) + " has unknown status '" +
                         status + "'");
    }
    row.status = *parsed;
    row.experiment_file = q.optionalText(3);
    if (row.experiment_file) row.experiment_file = folder.resolved(*row.experiment_file);
    row.config_json = folder.resolvedConfig(q.columnText(4));
    row.strategy = q.columnText(5);
    row.devices = q.columnText(6);
    row.global_batch = q.optionalInt(7);
    row.threads = q.optionalInt(8);
    row.dataset = q.optionalText(9);
    row.model = q.optionalText(10);
    row.host = q.columnText(11);
    row.pid = q.columnInt(12);
    row.proc_start = q.optionalInt(13);
    row.boot_id = q.optionalText(14);
    row.started_at = q.columnText(15);
    row.ended_at = q.optionalText(16);
    row.message = q.optionalText(17);
    row.steps = q.optionalInt(18);
    row.epochs = q.optionalInt(19);
    row.final_loss = q.optionalDouble(20);
    row.final_accuracy = q.optionalDouble(21);
    row.best_accuracy = q.optionalDouble(22);
    row.time_to_target = q.optionalDouble(23);
    row.step_at_target = q.optionalInt(24);
    row.target_accuracy = q.optionalDouble(25);
    row.train_seconds = q.optionalDouble(26);
    row.eval_seconds = q.optionalDouble(27);
    row.throughput = q.optionalDouble(28);
    row.stop_reason = q.optionalText(29);
    row.input_seconds = q.optionalDouble(30);
    row.skipped_records = q.optionalInt(31);
    row.replicas = q.optionalInt(32);
    row.comm_seconds = q.optionalDouble(33);
    row.wait_seconds = q.optionalDouble(34);
    row.verdict = q.optionalText(35);
    row.clock = q.columnText(36);
    row.host_seconds = q.optionalDouble(37);
    row.device_type = q.optionalText(38);
    row.device_count = q.optionalInt(39);
    row.price_per_device_hour = q.optionalDouble(40);
    row.host_price_per_hour = q.optionalDouble(41);
    row.cost = q.optionalDouble(42);
    row.train_examples = q.optionalInt(43);
    row.data_fraction = q.optionalDouble(44);
    row.param_count = q.optionalInt(45);
    row.warm_start_run = q.optionalInt(46);
    row.kind = q.columnText(47);
    return row;
}

std::vector<RunRow> readRunRows(Statement& query, const std::string& path, const RunStoreFolder& folder) {
    Statement::ResetGuard guard(query);
    std::vector<RunRow> rows;
    while (query.step()) rows.push_back(readRunRow(query, path, folder));
    return rows;
}

bool isAllDigits(const std::string& text) {
    return !text.empty() && text.size() < 19 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

RunStore RunStore::open(const std::string& path, OpenMode mode) {
    if (path.empty()) throw StoreError("run store path is empty");
    const bool writable = mode == OpenMode::ReadWrite;
    auto db = std::make_unique<Database>(
        path, writable ? Database::Access::ReadWrite : Database::Access::ReadOnly);
    // SQLite quietly opens a write-protected file read-only even when asked for read-write.
    const bool fileWritable = sqlite3_db_readonly(db->handle(), "main") == 0;
    const SchemaState schema = Schema::prepare(*db, writable && fileWritable);

    RunStore store(path, std::move(db));
    store.schemaVersion_ = schema.version;
    store.readOnly_ = schema.readOnly;
    store.readOnlyReason_ = schema.readOnlyReason;
    if (writable && !fileWritable && schema.version <= latestSchemaVersion()) {
        store.readOnlyReason_ = path + ": the file is not writable; opened read-only";
    }
    store.markInterruptedIfWritable();
    return store;
}

RunStore::RunStore(std::string path, std::unique_ptr<Database> db)
    : path_(std::move(path)), folder_(path_), db_(std::move(db)) {}

RunStore::~RunStore() = default;
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

int RunStore::latestSchemaVersion() { return Schema::latestVersion(); }

int64_t RunStore::dataVersion() {
    Statement& query = db_->cached("PRAGMA data_version");
    Statement::ResetGuard guard(query);
    query.step();
    return query.columnInt(0);
}

bool RunStore::schemaChanged() {
    Statement& query = db_->cached("PRAGMA user_version");
    Statement::ResetGuard guard(query);
    return query.step() && query.columnInt(0) != schemaVersion_;
}

void RunStore::requireWritable(const char* what) const {
    if (readOnly_) throw StoreError(std::string("cannot ") + what + ": " + readOnlyReason_);
}

void RunStore::markInterruptedIfWritable() {
    if (readOnly_) return;
    try {
        markInterruptedRuns();
    } catch (const StoreError& error) {
        // Another process held the write lock for the whole busy timeout. Reading must not fail
        // for that: refreshStatuses() still reports dead runs as interrupted.
        if (error.sqliteCode() != SQLITE_BUSY) throw;
    }
}

void RunStore::refreshStatuses(std::vector<RunRow>& rows) {
    // Read-only (or the marking above could not get the lock): report what a writer would store,
    // without storing it. On a writable store this only re-checks runs that are alive.
    const bool anyRunning = std::any_of(rows.begin(), rows.end(), [](const RunRow& row) {
        return row.status == RunStatus::Running;
    });
    if (!anyRunning) return;
    for (const InterruptedRun& found : InterruptDetector::find(*db_, ProcessIdentity::current())) {
        for (RunRow& row : rows) {
            if (row.id != found.id) continue;
            row.status = RunStatus::Interrupted;
            row.message = found.message;
            if (!row.steps) row.steps = found.lastStep;
        }
    }
}

std::vector<RunRow> RunStore::listRuns() {
    markInterruptedIfWritable();
    Statement& query =
        db_->cached("SELECT " + std::string(kRunColumns) + " FROM runs ORDER BY id DESC");
    std::vector<RunRow> rows = readRunRows(query, path_, folder_);
    refreshStatuses(rows);
    return rows;
}

std::optional<RunRow> RunStore::run(RunId id) {
    markInterruptedIfWritable();
    Statement& query = db_->cached("SELECT " + std::string(kRunColumns) + " FROM runs WHERE id = ?1");
    query.bindInt(1, id.value);
    std::vector<RunRow> rows = readRunRows(query, path_, folder_);
    refreshStatuses(rows);
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
}

std::optional<RunRow> RunStore::findRun(const std::string& idOrName) {
    if (isAllDigits(idOrName)) {
        if (auto row = run(RunId{std::stoll(idOrName)})) return row;
    }
    markInterruptedIfWritable();
    Statement& query = db_->cached("SELECT " + std::string(kRunColumns) +
                                   " FROM runs WHERE name = ?1 ORDER BY id DESC LIMIT 1");
    query.bindText(1, std::string_view(idOrName));
    std::vector<RunRow> rows = readRunRows(query, path_, folder_);
    refreshStatuses(rows);
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
}

std::vector<StepSample> RunStore::steps(RunId id, int64_t afterStep) {
    static const std::string sql =
        "SELECT step, epoch, loss, step_seconds, samples, samples_per_second, learning_rate, wall_seconds, "
        "comm_seconds, wait_seconds" + phaseColumns(PhaseTable::Steps) +
        " FROM steps WHERE run_id = ?1 AND step > ?2 ORDER BY step";
    constexpr int kFirstPhase = 10;
    Statement& query = db_->cached(sql);
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value).bindInt(2, afterStep);
    std::vector<StepSample> steps;
    while (query.step()) {
        StepSample& s = steps.emplace_back();
        s.step = query.columnInt(0);
        s.epoch = query.columnInt(1);
        s.loss = query.columnDouble(2);
        s.step_seconds = query.columnDouble(3);
        s.samples = query.columnInt(4);
        s.samples_per_second = query.columnDouble(5);
        s.learning_rate = query.columnDouble(6);
        s.wall_seconds = query.columnDouble(7);
        s.comm_seconds = query.optionalDouble(8).value_or(0.0);
        s.wait_seconds = query.optionalDouble(9).value_or(0.0);
        int column = kFirstPhase;
        for (const StepPhase& p : kStepPhases) {
            const std::optional<double> seconds = query.optionalDouble(column++);
            // Steps recorded before schema 5 have no breakdown: everything but input is "other".
            if (!seconds && p.phase == engine::prof::Phase::Other)
                s.*p.seconds = std::max(0.0, s.step_seconds - s.input_seconds);
            else
                s.*p.seconds = seconds.value_or(0.0);
        }
    }
    return steps;
}

std::vector<ReplicaStepRow> RunStore::replicaSteps(RunId id) {
    static const std::string sql =
        "SELECT step, rank, samples, compute_seconds, comm_seconds, wait_seconds" +
        phaseColumns(PhaseTable::ReplicaSteps) + " FROM replica_steps WHERE run_id = ?1 ORDER BY step, rank";
    constexpr int kFirstPhase = 6;
    Statement& query = db_->cached(sql);
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<ReplicaStepRow> rows;
    while (query.step()) {
        ReplicaStepRow& r = rows.emplace_back();
        r.step = query.columnInt(0);
        r.replica.rank = static_cast<int>(query.columnInt(1));
        r.replica.samples = query.columnInt(2);
        r.replica.compute_seconds = query.columnDouble(3);
        r.replica.comm_seconds = query.columnDouble(4);
        r.replica.wait_seconds = query.columnDouble(5);
        int column = kFirstPhase;
        for (const StepPhase& p : kStepPhases)
            if (p.perReplica) r.replica.*p.seconds = query.optionalDouble(column++).value_or(0.0);
    }
    return rows;
}

std::vector<ReplicaMean> RunStore::replicaMeans(RunId id, int64_t lastSteps) {
    Statement& query = db_->cached(
        "SELECT rank, COUNT(*), AVG(compute_seconds), AVG(comm_seconds), AVG(wait_seconds) FROM replica_steps "
        "WHERE run_id = ?1 AND step > (SELECT MAX(step) FROM replica_steps WHERE run_id = ?1) - ?2 "
        "GROUP BY rank ORDER BY rank");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    query.bindInt(2, lastSteps);
    std::vector<ReplicaMean> out;
    while (query.step())
        out.push_back({static_cast<int>(query.columnInt(0)), query.columnInt(1), query.columnDouble(2),
                       query.columnDouble(3), query.columnDouble(4)});
    return out;
}

std::vector<PsUpdateRow> RunStore::psUpdates(RunId id) {
    Statement& query = db_->cached(
        "SELECT step, server, worker, attempt, staleness FROM ps_updates WHERE run_id = ?1 ORDER BY step, server");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<PsUpdateRow> rows;
    while (query.step()) {
        PsUpdateRow& r = rows.emplace_back();
        r.step = query.columnInt(0);
        r.update.server = static_cast<int>(query.columnInt(1));
        r.update.worker = static_cast<int>(query.columnInt(2));
        r.update.attempt = static_cast<int>(query.columnInt(3));
        r.update.staleness = query.columnInt(4);
    }
    return rows;
}

std::vector<InputStageRow> RunStore::inputStages(RunId id) {
    Statement& query = db_->cached(
        "SELECT step, stage, seconds, items, bytes, fill FROM input_stages WHERE run_id = ?1 ORDER BY step, stage");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<InputStageRow> rows;
    while (query.step()) {
        InputStageRow& r = rows.emplace_back();
        r.step = query.columnInt(0);
        r.stage.stage = query.columnText(1);
        r.stage.seconds = query.columnDouble(2);
        r.stage.items = query.columnInt(3);
        r.stage.bytes = query.columnInt(4);
        r.stage.fill = query.optionalDouble(5).value_or(-1.0);
    }
    return rows;
}

std::vector<std::pair<std::string, std::string>> RunStore::attributes(RunId id) {
    Statement& query = db_->cached("SELECT key, value FROM run_attributes WHERE run_id = ?1 ORDER BY key");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<std::pair<std::string, std::string>> out;
    while (query.step()) {
        std::string key = query.columnText(0);
        std::string value = folder_.resolvedAttribute(key, query.columnText(1));
        out.emplace_back(std::move(key), std::move(value));
    }
    return out;
}

std::vector<EvalSample> RunStore::evals(RunId id) {
    Statement& query = db_->cached(
        "SELECT step, epoch, split, loss, accuracy, samples, eval_seconds, wall_seconds "
        "FROM evals WHERE run_id = ?1 ORDER BY rowid");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<EvalSample> evals;
    while (query.step()) {
        EvalSample& e = evals.emplace_back();
        e.step = query.columnInt(0);
        e.epoch = query.columnInt(1);
        e.split = query.columnText(2);
        e.loss = query.columnDouble(3);
        e.accuracy = query.columnDouble(4);
        e.samples = query.columnInt(5);
        e.eval_seconds = query.columnDouble(6);
        e.wall_seconds = query.columnDouble(7);
    }
    return evals;
}

bool RunStore::deleteRun(RunId id) {
    requireWritable("delete a run");
    markInterruptedRuns();
    Transaction transaction(*db_);
    Statement& status = db_->cached("SELECT status, pid, host FROM runs WHERE id = ?1");
    status.bindInt(1, id.value);
    {
        Statement::ResetGuard guard(status);
        if (!status.step()) return false;
        if (status.columnText(0) == "running") {
            throw StoreError(path_ + ": cannot delete run " + std::to_string(id.value) +
                             ": it is still running (process " +
                             std::to_string(status.columnInt(1)) + " on " + status.columnText(2) +
                             "); stop it first");
        }
    }
    Statement& remove = db_->cached("DELETE FROM runs WHERE id = ?1");
    remove.bindInt(1, id.value).run();
    transaction.commit();
    return true;
}

bool RunStore::renameRun(RunId id, const std::string& name) {
    requireWritable("rename a run");
    if (name.empty()) throw std::invalid_argument("a run name must not be empty");
    Statement& update = db_->cached("UPDATE runs SET name = ?2 WHERE id = ?1");
    update.bindInt(1, id.value).bindText(2, std::string_view(name)).run();
    return db_->changes() > 0;
}

int RunStore::markInterruptedRuns() {
    requireWritable("mark interrupted runs");
    return InterruptDetector::mark(*db_, ProcessIdentity::current());
}

bool RunStore::recordJobFailure(const ProcessIdentity& writer, const std::string& cause,
                                const std::string& othersCause) {
    requireWritable("record a job's failure");
    return InterruptDetector::recordJobFailure(*db_, writer, cause, othersCause);
}

}  // namespace trainbench::profiler
