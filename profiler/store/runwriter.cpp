#include "profiler/store/runwriter.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <cerrno>
#include <stdexcept>

#include "profiler/store/database.h"
#include "profiler/store/diskspace.h"
#include "profiler/store/processidentity.h"
#include "profiler/store/schema.h"
#include "profiler/store/stepphasecolumns.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

using Clock = std::chrono::steady_clock;

// A batch that meets SQLITE_BUSY (another writer held the lock for the whole busy timeout) is put
// back and retried; only this many attempts in a row turn it into an error.
constexpr int kMaxBusyAttempts = 6;

// A finished run's cost: its devices and host at their prices over the billed time, the training
// and evaluation seconds (?11 and ?12 of the final UPDATE, the values being written). NULL when no
// price is known. RunRow::costPerSecond() is the same rate.
// The scale columns come from the plan.* attributes the run recorded when it started (the data and
// the model are known only once they are loaded, after the run row exists).
constexpr std::string_view kPlanAttribute =
    "(SELECT CAST(value AS INTEGER) FROM run_attributes WHERE run_id = ?1 AND key = ";
constexpr std::string_view kCostExpression =
    "CASE WHEN price_per_device_hour IS NULL AND host_price_per_hour IS NULL THEN NULL ELSE "
    "(coalesce(device_count, 1) * coalesce(price_per_device_hour, 0) + coalesce(host_price_per_hour, 0)) * "
    "(coalesce(?11, 0) + coalesce(?12, 0)) / 3600.0 END";

// The steps and replica_steps columns before the step phases' (which follow, from kStepPhases).
constexpr int kStepColumns = 11;
constexpr int kReplicaColumns = 7;

const std::string& stepInsertSql() {
    static const std::string sql =
        "INSERT INTO steps (run_id, step, epoch, loss, step_seconds, samples, samples_per_second, learning_rate, "
        "wall_seconds, comm_seconds, wait_seconds" + phaseColumns(PhaseTable::Steps) + ") VALUES (" +
        sqlParameters(kStepColumns + static_cast<int>(engine::kStepPhases.size())) + ")";
    return sql;
}

const std::string& replicaInsertSql() {
    static const std::string sql =
        "INSERT INTO replica_steps (run_id, step, rank, samples, compute_seconds, comm_seconds, wait_seconds" +
        phaseColumns(PhaseTable::ReplicaSteps) + ") VALUES (" +
        sqlParameters(kReplicaColumns + static_cast<int>(engine::kPerReplicaPhaseCount)) + ")";
    return sql;
}

bool isBusy(const StoreError& error) {
    return error.sqliteCode() == SQLITE_BUSY || error.sqliteCode() == SQLITE_LOCKED;
}

// "runs.db: database or disk is full" -> "database or disk is full"
std::string withoutPath(const std::string& message, const std::string& path) {
    const std::string prefix = path + ": ";
    return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

}  // namespace

RunWriter::RunWriter(const std::string& path, const RunSpec& spec, RunWriterOptions options)
    : path_(path), folder_(path), options_(options), reserve_(path) {
    if (!nlohmann::json::accept(spec.config_json)) {
        throw std::invalid_argument("RunSpec.config_json is not valid JSON");
    }
    open();
    insertRun(spec);
    requireRoom();
    thread_ = std::thread([this] { threadMain(); });
}

RunWriter::RunWriter(const std::string& path, const ResumeRun& resume, RunWriterOptions options)
    : path_(path), folder_(path), options_(options), reserve_(path) {
    open();
    reopenRun(resume);
    committedStep_ = resume.afterStep;
    requireRoom();
    thread_ = std::thread([this] { threadMain(); });
}

StoreError RunWriter::diskFull() const {
    const std::string after = committedStep_ > 0 ? " after step " + std::to_string(committedStep_) : "";
    return StoreError(path_ + ": could not go on recording run " + std::to_string(runId_.value) + after +
                          ": the disk is full (" + diskFullDetail(reserve_.walPath(), reserve_.error()) +
                          "); the run stops while its final status still fits",
                      SQLITE_FULL);
}

void RunWriter::requireRoom() {
    if (reserve_.keep()) return;
    const StoreError error = diskFull();
    markFailedQuietly(withoutPath(error.what(), path_));
    throw error;
}

void RunWriter::open() {
    if (path_.empty()) throw StoreError("run store path is empty");
    db_ = std::make_unique<Database>(path_, Database::Access::ReadWrite);
    // SQLite quietly opens a write-protected file read-only even when asked for read-write.
    if (sqlite3_db_readonly(db_->handle(), "main") != 0) {
        throw StoreError(path_ + ": cannot record a run: the file is not writable");
    }
    const SchemaState schema = Schema::prepare(*db_, true);
    if (schema.readOnly) throw StoreError("cannot record a run: " + schema.readOnlyReason);
}

void RunWriter::reopenRun(const ResumeRun& resume) {
    const ProcessIdentity self = ProcessIdentity::current();
    Transaction transaction(*db_);
    Statement& update = db_->cached(
        "UPDATE runs SET status = 'running', host = ?2, pid = ?3, proc_start = ?4, boot_id = ?5, ended_at = NULL, "
        "message = NULL, steps = NULL, epochs = NULL, final_loss = NULL, final_accuracy = NULL, best_accuracy = NULL, "
        "time_to_target = NULL, step_at_target = NULL, train_seconds = NULL, eval_seconds = NULL, throughput = NULL, "
        "stop_reason = NULL, input_seconds = NULL, skipped_records = NULL, comm_seconds = NULL, wait_seconds = NULL, "
        "host_seconds = NULL, cost = NULL WHERE id = ?1");
    update.bindInt(1, resume.run.value)
        .bindText(2, std::string_view(self.host))
        .bindInt(3, self.pid)
        .bindInt(4, self.proc_start)
        .bindText(5, self.boot_id);
    update.run();
    if (db_->changes() == 0)
        throw StoreError(path_ + ": cannot resume run " + std::to_string(resume.run.value) + ": there is no such run");
    // What came after the checkpoint is trained again.
    for (const char* table : {"steps", "replica_steps", "input_stages", "evals", "ps_updates"}) {
        Statement& remove = db_->cached(std::string("DELETE FROM ") + table + " WHERE run_id = ?1 AND step > ?2");
        remove.bindInt(1, resume.run.value).bindInt(2, resume.afterStep);
        remove.run();
    }
    transaction.commit();
    runId_ = resume.run;
    lastStep_ = resume.afterStep;
}

RunWriter::~RunWriter() {
    if (finished_ || !thread_.joinable()) return;
    try {
        stop(Final{RunStatus::Failed, std::nullopt,
                   "the run ended without a final status (its RunWriter was destroyed before "
                   "finish(), e.g. by an exception in the run process)"});
    } catch (...) {
        // Nothing more can be done here; the row stays 'running' until found interrupted.
    }
}

void RunWriter::insertRun(const RunSpec& spec) {
    const ProcessIdentity self = ProcessIdentity::current();
    // Paths inside the store's folder are recorded relative to it, so that the folder can move.
    const std::optional<std::string> experimentFile =
        spec.experiment_file ? std::optional(folder_.recorded(*spec.experiment_file)) : std::nullopt;
    const std::string config = folder_.recordedConfig(spec.config_json);
    // One transaction: a reader either sees the whole row (config, status, identity) or none.
    Transaction transaction(*db_);
    Statement& insert = db_->cached(
        "INSERT INTO runs (name, status, experiment_file, config_json, strategy, devices, "
        "global_batch, threads, dataset, model, host, pid, proc_start, boot_id, started_at, "
        "target_accuracy, replicas, clock, device_type, device_count, price_per_device_hour, host_price_per_hour, "
        "train_examples, data_fraction, param_count, warm_start_run, kind) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, "
        "?7, ?8, ?9, ?10, ?11, ?12, ?13, " + std::string(kSqlNow) + ", ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
        "?23, ?24, ?25)");
    insert.bindText(1, std::string_view(spec.name))
        .bindText(2, experimentFile)
        .bindText(3, std::string_view(config))
        .bindText(4, std::string_view(spec.strategy))
        .bindText(5, std::string_view(spec.devices))
        .bindInt(6, spec.global_batch)
        .bindInt(7, spec.threads)
        .bindText(8, spec.dataset)
        .bindText(9, spec.model)
        .bindText(10, std::string_view(self.host))
        .bindInt(11, self.pid)
        .bindInt(12, self.proc_start)
        .bindText(13, self.boot_id)
        .bindDouble(14, spec.target_accuracy)
        .bindInt(15, spec.replicas)
        .bindText(16, std::string_view(spec.clock))
        .bindText(17, spec.device_type)
        .bindInt(18, spec.device_count)
        .bindDouble(19, spec.price_per_device_hour)
        .bindDouble(20, spec.host_price_per_hour)
        .bindInt(21, spec.train_examples)
        .bindDouble(22, spec.data_fraction)
        .bindInt(23, spec.param_count)
        .bindInt(24, spec.warm_start_run)
        .bindText(25, std::string_view(spec.kind));
    insert.run();
    runId_ = RunId{db_->lastInsertRowId()};
    if (spec.name.empty()) {
        Statement& name = db_->cached("UPDATE runs SET name = 'run-' || id WHERE id = ?1");
        name.bindInt(1, runId_.value).run();
    }
    transaction.commit();
}

void RunWriter::throwIfFailed() const {
    if (error_) throw *error_;
}

void RunWriter::step(const engine::StepRecord& record) {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) throw std::logic_error("RunWriter::step() after finish()");
    if (record.step <= lastStep_) {
        throw std::invalid_argument("run " + std::to_string(runId_.value) + ": step " +
                                    std::to_string(record.step) + " recorded after step " +
                                    std::to_string(lastStep_) + "; step numbers must increase");
    }
    lastStep_ = record.step;
    queue_.steps.push_back(record);
    ++enqueued_;
    const bool full = queue_.steps.size() + queue_.evals.size() >= options_.maxQueued;
    lock.unlock();
    if (full) wake_.notify_one();
}

void RunWriter::eval(const engine::EvalRecord& record) {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) throw std::logic_error("RunWriter::eval() after finish()");
    queue_.evals.push_back(record);
    ++enqueued_;
    const bool full = queue_.steps.size() + queue_.evals.size() >= options_.maxQueued;
    lock.unlock();
    if (full) wake_.notify_one();
}

void RunWriter::attributes(const std::vector<std::pair<std::string, std::string>>& keyValues) {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) throw std::logic_error("RunWriter::attributes() after finish()");
    for (const auto& [key, value] : keyValues) queue_.attributes.emplace_back(key, folder_.recordedAttribute(key, value));
    ++enqueued_;
}

void RunWriter::opStats(int rank, const std::vector<engine::prof::OpRow>& rows) {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) throw std::logic_error("RunWriter::opStats() after finish()");
    queue_.opStats.emplace_back(rank, rows);
    ++enqueued_;
}

void RunWriter::loadTestPoint(const LoadTestPoint& point) {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) throw std::logic_error("RunWriter::loadTestPoint() after finish()");
    queue_.loadTestPoints.push_back(point);
    ++enqueued_;
}

void RunWriter::flush() {
    std::unique_lock lock(mutex_);
    throwIfFailed();
    if (final_) return;  // finish() has flushed, or is flushing, everything
    const uint64_t target = enqueued_;
    flushWanted_ = true;
    wake_.notify_one();
    committed_.wait(lock, [&] { return committedUpTo_ >= target || error_.has_value(); });
    throwIfFailed();
}

void RunWriter::finish(RunStatus status, const engine::RunSummary& summary,
                       const std::string& message) {
    if (status == RunStatus::Running) {
        throw std::invalid_argument("RunWriter::finish() needs a final status, not 'running'");
    }
    {
        std::lock_guard lock(mutex_);
        if (final_) throw std::logic_error("RunWriter::finish() called twice");
    }
    stop(Final{status, summary, message});
}

void RunWriter::stop(Final final) {
    {
        std::lock_guard lock(mutex_);
        final_ = std::move(final);
    }
    wake_.notify_one();
    thread_.join();
    finished_ = true;
    std::optional<StoreError> error;
    {
        std::lock_guard lock(mutex_);
        error = error_;
    }
    if (error) {
        markFailedQuietly(withoutPath(error->what(), path_));
        throw *error;
    }
}

std::size_t RunWriter::committedBatches() const {
    std::lock_guard lock(mutex_);
    return batches_;
}

void RunWriter::threadMain() {
    std::unique_lock lock(mutex_);
    auto due = Clock::now() + options_.commitInterval;
    int busyAttempts = 0;
    while (true) {
        wake_.wait_until(lock, due, [&] {
            return final_.has_value() || flushWanted_ ||
                   queue_.steps.size() + queue_.evals.size() >= options_.maxQueued;
        });
        Batch batch;
        std::swap(batch, queue_);
        const uint64_t upTo = enqueued_;
        const std::optional<Final> final = final_;
        flushWanted_ = false;
        lock.unlock();

        const bool hasWork = !batch.steps.empty() || !batch.evals.empty() || !batch.attributes.empty() ||
                             !batch.opStats.empty() || !batch.loadTestPoints.empty() || final;
        std::optional<StoreError> failure;
        bool retry = false;
        if (hasWork) {
            try {
                write(batch, final ? &*final : nullptr);
            } catch (const StoreError& error) {
                retry = isBusy(error) && ++busyAttempts < kMaxBusyAttempts;
                if (!retry) failure = error;
            } catch (const std::exception& error) {
                failure = StoreError(path_ + ": " + error.what());
            }
        }

        lock.lock();
        due = Clock::now() + options_.commitInterval;
        if (retry) {
            // Put the batch back in front of what arrived meanwhile; order matters for steps.
            batch.steps.insert(batch.steps.end(), queue_.steps.begin(), queue_.steps.end());
            batch.evals.insert(batch.evals.end(), queue_.evals.begin(), queue_.evals.end());
            batch.attributes.insert(batch.attributes.end(), queue_.attributes.begin(), queue_.attributes.end());
            batch.opStats.insert(batch.opStats.end(), queue_.opStats.begin(), queue_.opStats.end());
            batch.loadTestPoints.insert(batch.loadTestPoints.end(), queue_.loadTestPoints.begin(),
                                        queue_.loadTestPoints.end());
            std::swap(batch, queue_);
            continue;
        }
        if (failure) {
            error_ = std::move(failure);
            committed_.notify_all();
            return;
        }
        busyAttempts = 0;
        if (hasWork) ++batches_;
        if (!batch.steps.empty()) committedStep_ = batch.steps.back().step;
        committedUpTo_ = upTo;
        if (final) {
            committed_.notify_all();
            return;
        }
        // Committed; but with no room left for the final status, this is where recording stops.
        if (hasWork && !reserve_.keep()) {
            error_ = diskFull();
            committed_.notify_all();
            return;
        }
        committed_.notify_all();
    }
}

void RunWriter::write(const Batch& batch, const Final* final) {
    try {
        Transaction transaction(*db_);
        Statement& insertStep = db_->cached(stepInsertSql());
        for (const engine::StepRecord& s : batch.steps) {
            insertStep.bindInt(1, runId_.value)
                .bindInt(2, s.step)
                .bindInt(3, s.epoch)
                .bindDouble(4, s.loss)
                .bindDouble(5, s.step_seconds)
                .bindInt(6, s.samples)
                .bindDouble(7, s.samples_per_second)
                .bindDouble(8, s.learning_rate)
                .bindDouble(9, s.wall_seconds)
                .bindDouble(10, s.comm_seconds)
                .bindDouble(11, s.wait_seconds);
            engine::forEachStepPhase([&](auto i) {
                constexpr size_t k = decltype(i)::value;
                insertStep.bindDouble(kStepColumns + 1 + static_cast<int>(k), s.*engine::kStepPhases[k].seconds);
            });
            insertStep.run();
        }
        Statement& insertReplica = db_->cached(replicaInsertSql());
        for (const engine::StepRecord& s : batch.steps) {
            for (const engine::ReplicaStep& r : s.replicas) {
                insertReplica.bindInt(1, runId_.value)
                    .bindInt(2, s.step)
                    .bindInt(3, r.rank)
                    .bindInt(4, r.samples)
                    .bindDouble(5, r.compute_seconds)
                    .bindDouble(6, r.comm_seconds)
                    .bindDouble(7, r.wait_seconds);
                int column = kReplicaColumns;
                engine::forEachStepPhase([&](auto i) {
                    constexpr const engine::StepPhase& phase = engine::kStepPhases[decltype(i)::value];
                    if constexpr (phase.perReplica) insertReplica.bindDouble(++column, r.*phase.seconds);
                });
                insertReplica.run();
            }
        }
        Statement& insertUpdate = db_->cached(
            "INSERT INTO ps_updates (run_id, step, server, worker, attempt, staleness) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        for (const engine::StepRecord& s : batch.steps) {
            for (const engine::ParamUpdate& u : s.updates) {
                insertUpdate.bindInt(1, runId_.value)
                    .bindInt(2, s.step)
                    .bindInt(3, u.server)
                    .bindInt(4, u.worker)
                    .bindInt(5, u.attempt)
                    .bindInt(6, u.staleness);
                insertUpdate.run();
            }
        }
        Statement& insertStage = db_->cached(
            "INSERT INTO input_stages (run_id, step, stage, seconds, items, bytes, fill) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        for (const engine::StepRecord& s : batch.steps) {
            for (const engine::InputStageStep& st : s.input_stages) {
                insertStage.bindInt(1, runId_.value)
                    .bindInt(2, s.step)
                    .bindText(3, std::string_view(st.stage))
                    .bindDouble(4, st.seconds)
                    .bindInt(5, st.items)
                    .bindInt(6, st.bytes)
                    .bindDouble(7, st.fill >= 0 ? std::optional(st.fill) : std::nullopt);
                insertStage.run();
            }
        }
        Statement& insertAttribute = db_->cached(
            "INSERT OR REPLACE INTO run_attributes (run_id, key, value) VALUES (?1, ?2, ?3)");
        for (const auto& [key, value] : batch.attributes) {
            insertAttribute.bindInt(1, runId_.value).bindText(2, std::string_view(key)).bindText(3, std::string_view(value));
            insertAttribute.run();
        }
        Statement& clearOps = db_->cached("DELETE FROM op_stats WHERE run_id = ?1 AND rank = ?2");
        Statement& insertOp = db_->cached(
            "INSERT OR REPLACE INTO op_stats (run_id, rank, kind, shape, calls, seconds, flops, bytes) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        for (const auto& [rank, rows] : batch.opStats) {
            clearOps.bindInt(1, runId_.value).bindInt(2, rank).run();
            for (const engine::prof::OpRow& r : rows) {
                insertOp.bindInt(1, runId_.value)
                    .bindInt(2, rank)
                    .bindText(3, std::string_view(r.kind))
                    .bindText(4, std::string_view(r.shape))
                    .bindInt(5, r.calls)
                    .bindDouble(6, r.seconds)
                    .bindDouble(7, r.flops)
                    .bindDouble(8, r.bytes);
                insertOp.run();
            }
        }
        writeLoadTestPoints(batch.loadTestPoints);
        Statement& insertEval = db_->cached(
            "INSERT INTO evals (run_id, step, epoch, split, loss, accuracy, samples, "
            "eval_seconds, wall_seconds) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
        for (const engine::EvalRecord& e : batch.evals) {
            insertEval.bindInt(1, runId_.value)
                .bindInt(2, e.step)
                .bindInt(3, e.epoch)
                .bindText(4, std::string_view(e.split))
                .bindDouble(5, e.loss)
                .bindDouble(6, e.accuracy)
                .bindInt(7, e.samples)
                .bindDouble(8, e.eval_seconds)
                .bindDouble(9, e.wall_seconds);
            insertEval.run();
        }
        if (final != nullptr) {
            const std::optional<std::string> message =
                final->message.empty() ? std::nullopt : std::optional(final->message);
            if (final->summary) {
                // A run that failed has no summary of its own (its steps are 0): its steps column is
                // still the last step it recorded.
                const engine::RunSummary& s = *final->summary;
                Statement& update = db_->cached(
                    "UPDATE runs SET status = ?2, ended_at = " + std::string(kSqlNow) +
                    ", message = ?3, steps = max(?4, coalesce((SELECT max(step) FROM steps WHERE run_id = ?1), 0)), "
                    "epochs = ?5, final_loss = ?6, "
                    "final_accuracy = ?7, best_accuracy = ?8, time_to_target = ?9, "
                    "step_at_target = ?10, train_seconds = ?11, eval_seconds = ?12, "
                    "throughput = ?13, stop_reason = ?14, input_seconds = ?15, skipped_records = ?16, "
                    "comm_seconds = ?17, wait_seconds = ?18, host_seconds = ?19, cost = " +
                    std::string(kCostExpression) + ", train_examples = coalesce(train_examples, " +
                    std::string(kPlanAttribute) + "'plan.train_examples')), param_count = coalesce(param_count, " +
                    std::string(kPlanAttribute) + "'plan.param_count')) WHERE id = ?1");
                update.bindInt(1, runId_.value)
                    .bindText(2, runStatusName(final->status))
                    .bindText(3, message)
                    .bindInt(4, s.steps)
                    .bindInt(5, s.epochs_completed)
                    .bindDouble(6, s.final_loss)
                    // A run that never evaluated has no accuracy (NULL), not 0 %.
                    .bindDouble(7, s.evaluations > 0 ? std::optional(s.final_accuracy) : std::nullopt)
                    .bindDouble(8, s.evaluations > 0 ? std::optional(s.best_accuracy) : std::nullopt)
                    .bindDouble(9, s.time_to_target)
                    .bindInt(10, s.step_at_target)
                    .bindDouble(11, s.train_seconds)
                    .bindDouble(12, s.eval_seconds)
                    .bindDouble(13, s.throughput)
                    .bindText(14, s.stop_reason ? std::optional(std::string(engine::stopReasonName(*s.stop_reason)))
                                                : std::nullopt)
                    .bindDouble(15, s.input_seconds)
                    .bindInt(16, s.skipped_records)
                    .bindDouble(17, s.comm_seconds)
                    .bindDouble(18, s.wait_seconds)
                    .bindDouble(19, s.host_seconds > 0 ? std::optional(s.host_seconds) : std::nullopt);
                update.run();
            } else {
                Statement& update = db_->cached(
                    "UPDATE runs SET status = ?2, ended_at = " + std::string(kSqlNow) +
                    ", message = ?3, steps = coalesce(steps, "
                    "(SELECT max(step) FROM steps WHERE run_id = ?1)) WHERE id = ?1");
                update.bindInt(1, runId_.value)
                    .bindText(2, runStatusName(final->status))
                    .bindText(3, message);
                update.run();
            }
            if (db_->changes() == 0) {
                throw StoreError(path_ + ": run " + std::to_string(runId_.value) +
                                 " is no longer in the store (deleted while running?)");
            }
        }
        transaction.commit();
    } catch (const StoreError& error) {
        std::string what = "run " + std::to_string(runId_.value);
        if (!batch.steps.empty()) {
            what += ", steps " + std::to_string(batch.steps.front().step) + "-" +
                    std::to_string(batch.steps.back().step);
        }
        if (!batch.evals.empty()) what += ", " + std::to_string(batch.evals.size()) + " evals";
        if (final != nullptr) what += ", final status";
        // SQLite says "database or disk is full" and keeps no errno for it (the store sets no page
        // limit, so it is the disk); the detail says which file system and what is left on it.
        std::string reason = withoutPath(error.what(), path_);
        int systemErrno = sqlite3_system_errno(db_->handle());
        if ((error.sqliteCode() & 0xff) == SQLITE_FULL && systemErrno == 0) systemErrno = ENOSPC;
        const std::string disk = diskFullDetail(path_, systemErrno);
        if (!disk.empty()) reason += " (" + disk + ")";
        throw StoreError(path_ + ": could not save " + what + ": " + reason, error.sqliteCode());
    }
}

void RunWriter::markFailedQuietly(const std::string& message) noexcept {
    try {
        Transaction transaction(*db_);
        // steps: the highest committed step, as for any run that failed without a summary.
        Statement& update = db_->cached(
            "UPDATE runs SET status = 'failed', ended_at = " + std::string(kSqlNow) +
            ", message = ?2, steps = coalesce(steps, (SELECT max(step) FROM steps WHERE run_id = ?1)) "
            "WHERE id = ?1 AND status = 'running'");
        update.bindInt(1, runId_.value).bindText(2, std::string_view(message));
        update.run();
        transaction.commit();
    } catch (...) {
        // The disk may still be full; the row then stays 'running' and is found interrupted.
    }
}

}  // namespace trainbench::profiler
