#pragma once
// Records one run into the store from the run's own process. The constructor inserts the runs row
// (status 'running') in one transaction; step() and eval() only queue records, and a writer
// thread commits them in batches a few times per second; finish() commits the rest together with
// the summary and the final status. If a write fails (disk full, I/O error, ...) the next call
// throws StoreError and everything committed before stays in the file. Room for the final status
// is kept on disk ahead (WalReserve): on a disk that fills up the run still ends 'failed', saying so.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/instrument/opstats.h"
#include "engine/telemetry/runrecords.h"
#include "profiler/store/loadtestpoint.h"
#include "profiler/store/runid.h"
#include "profiler/store/runspec.h"
#include "profiler/store/runstorefolder.h"
#include "profiler/store/runstatus.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/walreserve.h"

namespace trainbench::profiler {

class Database;

struct RunWriterOptions {
    // How often queued records are committed. Readers (the GUI) see a live run this fresh.
    std::chrono::milliseconds commitInterval{250};
    // Commit early once this many records wait, so a fast loop does not build huge batches.
    std::size_t maxQueued = 4096;
};

// Where a restarted job picks its run up again: the run, and the last step its checkpoint holds.
struct ResumeRun {
    RunId run;
    int64_t afterStep = 0;
};

class RunWriter {
public:
    // Opens (creating and migrating if needed) the store at path and starts the run. Throws
    // StoreError if the store cannot be written (including a newer, read-only schema) and
    // std::invalid_argument if spec.config_json is not valid JSON.
    RunWriter(const std::string& path, const RunSpec& spec, RunWriterOptions options = {});
    // Continues an existing run from its checkpoint (a job restarted after a failure): records of
    // steps after `afterStep` are removed (they will be trained again), the row is 'running' again,
    // owned by this process, with its summary cleared. Throws StoreError if there is no such run.
    RunWriter(const std::string& path, const ResumeRun& resume, RunWriterOptions options = {});
    // Without finish(): commits what is queued and marks the run 'failed' ("ended without a final
    // status"). Callers that know better call finish() themselves. Never throws.
    ~RunWriter();

    RunWriter(const RunWriter&) = delete;
    RunWriter& operator=(const RunWriter&) = delete;

    RunId runId() const { return runId_; }
    const std::string& path() const { return path_; }

    // Queue a record; cheap (a mutex and a push). Throws StoreError if an earlier batch failed,
    // std::invalid_argument if steps do not increase, std::logic_error after finish().
    void step(const engine::StepRecord& record);
    void eval(const engine::EvalRecord& record);
    // Queue facts about the run (run_attributes); a key given again replaces its value.
    void attributes(const std::vector<std::pair<std::string, std::string>>& keyValues);
    // Queue the per-op statistics of one process (rank) of the run so far; they replace what that
    // rank stored before (the totals grow during the run).
    void opStats(int rank, const std::vector<engine::prof::OpRow>& rows);
    // Queue one measured point of a load test with its seconds (a run of kind "serve").
    void loadTestPoint(const LoadTestPoint& point);

    // Blocks until everything queued so far is committed. Throws StoreError on a failed write.
    void flush();

    // Commits the remaining records, the summary, the status and ended_at in one transaction and
    // stops the writer thread. status must not be Running. message is stored in runs.message
    // (empty: NULL). On a failed write it still tries to mark the run 'failed', then throws.
    void finish(RunStatus status, const engine::RunSummary& summary,
                const std::string& message = {});
    bool finished() const { return finished_; }

    // Transactions committed by the writer thread so far (for tests and diagnostics).
    std::size_t committedBatches() const;

private:
    struct Final {
        RunStatus status;
        std::optional<engine::RunSummary> summary;  // absent when the destructor ends the run
        std::string message;
    };
    struct Batch {
        std::vector<engine::StepRecord> steps;
        std::vector<engine::EvalRecord> evals;
        std::vector<std::pair<std::string, std::string>> attributes;
        std::vector<std::pair<int, std::vector<engine::prof::OpRow>>> opStats;
        std::vector<LoadTestPoint> loadTestPoints;
    };

    void open();
    void insertRun(const RunSpec& spec);
    void reopenRun(const ResumeRun& resume);
    void threadMain();
    void write(const Batch& batch, const Final* final);
    void writeLoadTestPoints(const std::vector<LoadTestPoint>& points);  // inside write()'s transaction
    void stop(Final final);
    void markFailedQuietly(const std::string& message) noexcept;
    void throwIfFailed() const;  // with mutex_ held
    // The room for the final status cannot be kept: the disk is (nearly) full.
    StoreError diskFull() const;
    void requireRoom();  // in the constructors: fails the new run at once when there is no room


    std::string path_;
    RunStoreFolder folder_;  // paths inside it are recorded relative to it
    RunWriterOptions options_;
    std::unique_ptr<Database> db_;
    WalReserve reserve_;
    RunId runId_;
    int64_t committedStep_ = 0;  // the last step committed (writer thread only)

    mutable std::mutex mutex_;
    std::condition_variable wake_;       // to the writer thread: work or stop
    std::condition_variable committed_;  // from the writer thread: a batch landed or failed
    Batch queue_;
    int64_t lastStep_ = 0;
    uint64_t enqueued_ = 0;         // records queued since the start
    uint64_t committedUpTo_ = 0;    // of those, committed
    std::size_t batches_ = 0;
    bool flushWanted_ = false;
    std::optional<Final> final_;
    std::optional<StoreError> error_;
    bool finished_ = false;
    std::thread thread_;
};

}  // namespace trainbench::profiler
