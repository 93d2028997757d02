#pragma once
// The read side of the run store, plus the few edits a user makes to saved runs (rename, delete).
// One RunStore per thread: it owns one SQLite connection. Runs are recorded by RunWriter, in the
// run's own process; docs/run-store.md describes the file.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/instrument/opstats.h"
#include "engine/telemetry/runrecords.h"
#include "profiler/store/evalsample.h"
#include "profiler/store/loadtestpoint.h"
#include "profiler/store/processidentity.h"
#include "profiler/store/runid.h"
#include "profiler/store/runrow.h"
#include "profiler/store/runstorefolder.h"
#include "profiler/verdict/stepsample.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

struct InputStageRow {
    int64_t step = 0;
    engine::InputStageStep stage;
};

// One update of an asynchronous step on one parameter server (ps_updates).
struct PsUpdateRow {
    int64_t step = 0;
    engine::ParamUpdate update;
};

struct ReplicaStepRow {
    int64_t step = 0;
    engine::ReplicaStep replica;
};

// One rank's (replica's, pipeline stage's, tensor-parallel device's) mean step over a run's last steps.
struct ReplicaMean {
    int rank = 0;
    int64_t steps = 0;  // averaged over
    double compute_seconds = 0.0, comm_seconds = 0.0, wait_seconds = 0.0;
    bool operator==(const ReplicaMean&) const = default;
};

// Per-op statistics of one process of a run (op_stats).
struct OpStatRow {
    int rank = 0;
    engine::prof::OpRow op;
};

class Database;

enum class OpenMode {
    ReadWrite,  // creates the file and its folder, migrates the schema, marks interrupted runs
    ReadOnly,   // never writes; the file must exist. An older schema (or an empty file) reads as
                // if migrated (CurrentSchemaViews); dead runs read as interrupted
};

class RunStore {
public:
    // Throws StoreError when the file cannot be opened or is not a run store. A store whose
    // schema is newer than this binary opens read-only instead (see readOnly()).
    static RunStore open(const std::string& path, OpenMode mode = OpenMode::ReadWrite);

    ~RunStore();
    RunStore(RunStore&&) noexcept;
    RunStore& operator=(RunStore&&) noexcept;

    const std::string& path() const { return path_; }
    int schemaVersion() const { return schemaVersion_; }
    static int latestSchemaVersion();
    // The file's schema is older than this binary's (opened ReadOnly; ReadWrite migrates it).
    bool needsMigration() const { return schemaVersion_ > 0 && schemaVersion_ < latestSchemaVersion(); }
    // True when the file's schema version is no longer the one this store opened (another process
    // migrated or created it): reopen to read its new tables and columns.
    bool schemaChanged();

    // True when opened ReadOnly or when the file's schema is newer than this binary; then every
    // edit throws StoreError with readOnlyReason() as its message.
    bool readOnly() const { return readOnly_; }
    std::string readOnlyReason() const { return readOnlyReason_; }

    // Changes whenever another connection commits to the file (PRAGMA data_version): a follower
    // polls it and reads only when it moved. Commits through this connection do not change it.
    int64_t dataVersion();

    // All runs, newest first. Runs whose process is gone are reported 'interrupted' (and stored
    // so when the store is writable).
    std::vector<RunRow> listRuns();

    // A run by id ("42") or name: digits are tried as an id first, then as a name; a name matches
    // exactly, and the newest run of that name wins.
    std::optional<RunRow> findRun(const std::string& idOrName);
    std::optional<RunRow> run(RunId id);

    // Committed steps in step order; with afterStep, only steps > afterStep (to follow a live run).
    std::vector<StepSample> steps(RunId id, int64_t afterStep = 0);
    // Committed evaluations in the order they were recorded.
    std::vector<EvalSample> evals(RunId id);
    // Per-step input-pipeline stage figures, by step then stage name.
    std::vector<InputStageRow> inputStages(RunId id);
    // Per-replica step breakdown (data-parallel runs), by step then rank.
    std::vector<ReplicaStepRow> replicaSteps(RunId id);
    // Per rank, the mean of replica_steps over the run's last `lastSteps` steps (none for one device).
    std::vector<ReplicaMean> replicaMeans(RunId id, int64_t lastSteps = 500);
    // parameter_server runs: every update, by step and server.
    std::vector<PsUpdateRow> psUpdates(RunId id);
    // A load test's points (kind "serve") in the order measured, each with its seconds.
    std::vector<LoadTestPoint> loadTestPoints(RunId id);
    // run_attributes, sorted by key.
    std::vector<std::pair<std::string, std::string>> attributes(RunId id);

    // The profiler's side (runstoreprofile.cpp). Per-op statistics of every rank that recorded them.
    std::vector<OpStatRow> opStats(RunId id);
    // What the classifier needs about a stored run: steps, op statistics (the lowest rank's), the
    // roofs of the run's host and thread count (if calibrated), memory (run attributes), experiment.
    ProfileInput profileInput(RunId id);
    // The stored verdict, findings, timeline and actions; nullopt if the run was not classified.
    std::optional<Verdict> verdict(RunId id);
    // Replaces the run's findings and actions and sets runs.verdict, in one transaction.
    void saveVerdict(RunId id, const Verdict& verdict);

    // Deletes a run with its steps and evals; false if there is no such run. Throws StoreError
    // for a run that is still running (its writer would fail on its next batch).
    bool deleteRun(RunId id);
    // False if there is no such run. The name must not be empty.
    bool renameRun(RunId id, const std::string& name);

    // Marks runs of dead processes 'interrupted' (see InterruptDetector); returns how many.
    // open(ReadWrite) and listRuns() already call it.
    int markInterruptedRuns();

    // A job's launcher records why the job failed on the run of its chief `writer` (see
    // InterruptDetector::recordJobFailure); true if the run changed.
    bool recordJobFailure(const ProcessIdentity& writer, const std::string& cause, const std::string& othersCause);

private:
    RunStore(std::string path, std::unique_ptr<Database> db);
    void requireWritable(const char* what) const;
    void markInterruptedIfWritable();
    void refreshStatuses(std::vector<RunRow>& rows);

    std::string path_;
    RunStoreFolder folder_;  // recorded "./" paths are read as paths in it
    std::unique_ptr<Database> db_;
    int schemaVersion_ = 0;
    bool readOnly_ = false;
    std::string readOnlyReason_;
};

}  // namespace trainbench::profiler
