// collectReport: one read of the store per run, into a ReportData the renderers use without the store.
#include <algorithm>
#include <chrono>
#include <ctime>

#include "profiler/report/report.h"
#include "profiler/store/runstore.h"

namespace trainbench::profiler {

namespace {

std::string nowIso() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buf;
}

RunReport readRun(RunStore& store, const RunRow& row) {
    RunReport r;
    r.run = row;
    r.steps = store.steps(row.id);
    r.evals = store.evals(row.id);
    r.verdict = store.verdict(row.id);
    // Every rank of a job runs the same ops; the lowest rank's stand for the run (as the profiler does).
    const std::vector<OpStatRow> ops = store.opStats(row.id);
    for (const OpStatRow& o : ops)
        if (o.rank == ops.front().rank) r.ops.push_back(o.op);
    std::stable_sort(r.ops.begin(), r.ops.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
    r.attributes = store.attributes(row.id);
    if (row.kind == "serve") r.loadTestPoints = store.loadTestPoints(row.id);
    // The roofs are looked up by host and thread count the way the classifier does.
    if (!r.ops.empty()) r.roofs = store.profileInput(row.id).roofs;
    return r;
}

}  // namespace

ReportData collectReport(RunStore& store, const std::vector<RunId>& runs) {
    if (runs.empty()) throw ReportError("a report needs at least one run (" + store.path() + ")");
    ReportData data;
    data.storePath = store.path();
    data.generatedAt = nowIso();
    for (RunId id : runs) {
        // A run named twice is shown once, where it was first named.
        if (std::any_of(data.runs.begin(), data.runs.end(), [&](const RunReport& r) { return r.run.id == id; })) continue;
        const std::optional<RunRow> row = store.run(id);
        if (!row) throw ReportError("no run " + std::to_string(id.value) + " in " + store.path());
        data.runs.push_back(readRun(store, *row));
    }
    return data;
}

ReportData collectReport(RunStore& store, const std::vector<std::string>& idsOrNames) {
    std::vector<RunId> ids;
    for (const std::string& key : idsOrNames) {
        const std::optional<RunRow> row = store.findRun(key);
        if (!row) throw ReportError("no run '" + key + "' in " + store.path());
        ids.push_back(row->id);
    }
    return collectReport(store, ids);
}

}  // namespace trainbench::profiler
