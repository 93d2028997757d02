#pragma once
// What the store reader hands the GUI thread: whole immutable values behind shared pointers, so a
// snapshot crosses threads without copying and a model can keep it as long as it likes.
#include <QMetaType>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/grouping/seedgroup.h"
#include "profiler/store/runstore.h"
#include "profiler/verdict/servingverdict.h"

namespace trainbench::ui {

// The store file the GUI follows. The GUI reads it without ever writing to it; only a change the
// user makes (rename, delete, launching a run) writes, on a connection of its own.
struct StoreInfo {
    QString path;
    bool exists = true;           // false: no file yet, shown empty; the first run creates it
    int schemaVersion = 0;        // the file's PRAGMA user_version
    int binarySchemaVersion = 0;  // the newest this binary knows
    bool readOnly = false;        // a newer schema or a file we may not write: shown, never changed
    QString readOnlyReason;
    bool needsMigration = false;  // an older schema: shown as it is; the first change asks to upgrade it
};

// What the Runs page shows of a load test: its best point (the highest achieved QPS).
struct ServeSummary {
    int points = 0;
    double bestQps = 0.0;
    std::optional<double> p99Ms;  // at the best point
    friend bool operator==(const ServeSummary&, const ServeSummary&) = default;
};

// Every run of the store, newest first, as RunStore::listRuns reads them.
struct RunList {
    StoreInfo store;
    std::vector<profiler::RunRow> runs;
    std::map<int64_t, ServeSummary> serve;  // by run id, for runs of kind "serve" with points
    int64_t generation = 0;  // increases with every new list
};
using RunListPtr = std::shared_ptr<const RunList>;

// What changed about one followed run since the last update. The first update of a run (and any
// after it was rewritten, e.g. resumed) has `reset` set and carries every step.
struct RunUpdate {
    profiler::RunRow row;
    bool reset = false;
    std::vector<profiler::StepSample> newSteps;     // steps after the previous update's last
    std::vector<profiler::EvalSample> evals;           // all of them (few)
    std::vector<std::pair<std::string, std::string>> attributes;
    std::vector<profiler::OpStatRow> opStats;
    std::optional<profiler::Verdict> verdict;
    // Each rank's mean step over the last 500 steps (replicas, pipeline stages, tensor devices):
    // read again whenever steps were added; empty for one device.
    std::vector<profiler::ReplicaMean> replicaMeans;
    // A load test (kind "serve"): every point measured so far, whole (they are few), and the
    // serving verdict of them (profiler/verdict/servingverdict.h), classified on the reader's thread.
    std::vector<profiler::LoadTestPoint> loadTestPoints;
    std::optional<profiler::ServingVerdict> servingVerdict;
};
using RunUpdatePtr = std::shared_ptr<const RunUpdate>;

// Every run's time to one target accuracy and the seed groups over them (Plan page), read on the
// store reader's thread for StoreService::requestTimeToAccuracy.
struct TtaSnapshot {
    quint64 request = 0;                       // as requestTimeToAccuracy returned it
    double target = 0.0;                       // the target, a fraction
    std::vector<profiler::RunTta> runs;        // every run, newest first
    std::vector<profiler::SeedGroup> groups;   // profiler::groupBySeed(runs)
    QString error;                             // the store could not be read
};
using TtaSnapshotPtr = std::shared_ptr<const TtaSnapshot>;

}  // namespace trainbench::ui

Q_DECLARE_METATYPE(trainbench::ui::StoreInfo)
Q_DECLARE_METATYPE(trainbench::ui::RunListPtr)
Q_DECLARE_METATYPE(trainbench::ui::RunUpdatePtr)
Q_DECLARE_METATYPE(trainbench::ui::TtaSnapshotPtr)
