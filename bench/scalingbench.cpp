// `scaling`: the scaling sweep (1, 2, 4 workers; sync vs async) through the real CLI. Every run is a
// `trainbench-cli run` of W1 or W2 into one run store, one after the other, in rounds (all points,
// then all points again) so that the machine's drift hits every point alike; the figures are read
// back from the store and are the medians over the rounds.
//
// Batch semantics. The workloads are defined at batch 128. Sync (multi_worker) keeps that as the
// global batch: N workers take 128 / N each and make one update together, so the optimisation is
// the single device's and only the speed changes. Async (parameter_server) has no global batch:
// each worker step is an update of its own. By default a worker's batch is 128 / N there too, so both
// modes do the same work per worker and step and move the same gradient bytes per step — the
// throughput columns compare the exchange, not the batch size. The price: async then updates N
// times per 128 samples on batches of 128 / N, so its steps to target are not the sync steps; the
// table's "epochs" column (samples to target / training set) is the comparable one.
// --async-batch full gives every async worker the whole 128 instead (each update then is the
// workload's step, stale; but a worker computes N times as much per exchange as a sync worker).
#include "bench/scalingbench.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "bench/childprocess.h"
#include "bench/scalingtable.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

namespace trainbench::bench {

namespace runattr = profiler::runattr;

namespace {

std::string lastLine(const std::string& text) {
    const size_t end = text.find_last_not_of(" \n\r\t");
    if (end == std::string::npos) return {};
    const size_t newline = text.rfind('\n', end);
    const size_t begin = newline == std::string::npos ? 0 : newline + 1;
    return text.substr(begin, end - begin + 1);
}

int64_t newestRunId(profiler::RunStore& store) {
    int64_t newest = 0;
    for (const auto& r : store.listRuns()) newest = std::max(newest, r.id.value);
    return newest;
}

std::optional<double> attributeNumber(const std::vector<std::pair<std::string, std::string>>& attributes,
                                      const std::string& key) {
    for (const auto& [k, v] : attributes) {
        if (k != key) continue;
        try {
            return std::stod(v);
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// The run this point just recorded: the newest one of its name after `before`.
void readRun(profiler::RunStore& store, const std::string& name, int64_t before, RunOutcome& outcome) {
    for (auto& r : store.listRuns())
        if (r.id.value > before && r.name == name && (!outcome.run || r.id.value > outcome.run->id.value))
            outcome.run = r;
    if (!outcome.run) return;
    const profiler::RunRow& run = *outcome.run;
    const profiler::RunId id = run.id;
    const int64_t at = run.step_at_target.value_or(-1);
    int64_t samplesAtTarget = 0;
    for (const auto& s : store.steps(id)) {
        outcome.samples += s.samples;
        if (s.step <= at) samplesAtTarget += s.samples;
    }
    if (run.step_at_target) outcome.samplesAtTarget = samplesAtTarget;
    double compute = 0.0;
    std::set<int> ranks;
    for (const auto& r : store.replicaSteps(id)) {
        compute += r.replica.compute_seconds;
        ranks.insert(r.replica.rank);
    }
    if (!ranks.empty())
        outcome.computeSeconds = compute / static_cast<double>(ranks.size());
    else if (run.train_seconds)
        outcome.computeSeconds = *run.train_seconds - run.input_seconds.value_or(0.0);
    const auto attributes = store.attributes(id);
    outcome.stalenessMean = attributeNumber(attributes, runattr::kPsStalenessMean);
    outcome.stalenessP95 = attributeNumber(attributes, runattr::kPsStalenessP95);
}

RunOutcome runPoint(const SweepPoint& p, const ScalingOptions& o, profiler::RunStore& store) {
    RunOutcome outcome;
    const std::string name = p.runName(o.quick);
    const std::string experiment = (std::filesystem::path(o.experiments) / p.workload->experiment).string();
    std::vector<std::string> argv{o.cli, "run", experiment, "--db", o.db, "-q"};
    for (auto& s : runOverrides(p, RunBudget{o.quick, o.quickSteps, o.maxEpochs})) {
        argv.push_back("--set");
        argv.push_back(s);
    }
    try {
        const int64_t before = newestRunId(store);
        const ChildRun child = runChild(argv);
        outcome.exitCode = child.exitCode;
        outcome.wallSeconds = child.wallSeconds;
        outcome.cpuSeconds = child.cpuSeconds;
        outcome.othersCpus = child.othersCpus;
        readRun(store, name, before, outcome);
        if (!outcome.completed()) {
            std::string why = lastLine(child.err);
            if (why.empty()) why = lastLine(child.out);
            outcome.problem = "exit " + std::to_string(child.exitCode) + (outcome.run ? "" : ", nothing recorded") +
                              (why.empty() ? "" : ": " + why);
        }
    } catch (const profiler::StoreError& e) {
        outcome.problem = std::string("run store: ") + e.what();
    }
    return outcome;
}

void printProgress(size_t index, size_t total, const SweepPoint& p, const RunOutcome& r, bool quick) {
    std::printf("[%zu/%zu] %-16s ", index, total, p.runName(quick).c_str());
    if (!r.completed()) {
        std::printf("%s\n", r.run ? (std::string(profiler::runStatusName(r.run->status)) + ": " +
                                     r.run->message.value_or(r.problem)).c_str()
                                  : r.problem.c_str());
    } else {
        const auto& run = *r.run;
        std::printf("%lld steps, %.0f samples/s", static_cast<long long>(run.steps.value_or(0)),
                    run.throughput.value_or(0.0));
        if (run.time_to_target)
            std::printf(", target at %.1f s (step %lld)", *run.time_to_target,
                        static_cast<long long>(run.step_at_target.value_or(0)));
        else if (!quick)
            std::printf(", target not reached (best %.2f %%)", run.best_accuracy.value_or(0.0) * 100.0);
        std::printf("\n");
    }
    const std::string id = r.run ? "run " + std::to_string(r.run->id.value) : "no run";
    if (r.wallSeconds < 1.0) {  // too short for CPU figures in 10 ms ticks
        std::printf("%*s %s, %.1f s wall\n", 8, "", id.c_str(), r.wallSeconds);
    } else {
        std::printf("%*s %s, %.0f s wall, %.2f CPUs, others %.2f CPUs\n", 8, "", id.c_str(), r.wallSeconds,
                    r.cpuSeconds / r.wallSeconds, r.othersCpus);
    }
    std::fflush(stdout);
}

// Points in the order they run within a round: per workload the single device, then for each N the
// sync and the async point side by side.
std::vector<PointResults> planPoints(const Workload& w, const ScalingOptions& o, const std::vector<Mode>& modes) {
    auto has = [&](Mode m) { return std::find(modes.begin(), modes.end(), m) != modes.end(); };
    std::vector<PointResults> points;
    auto add = [&](Mode mode, int n) {
        SweepPoint p{&w, mode, n, o.threads, mode == Mode::Async ? o.servers : 0, w.batch};
        if (mode == Mode::Sync || mode == Mode::SyncMpi || mode == Mode::Mirrored || (mode == Mode::Async && !o.asyncFullBatch))
            p.workerBatch = std::max<int64_t>(1, w.batch / n);
        points.push_back({p, {}});
    };
    if (has(Mode::Single)) add(Mode::Single, 1);
    for (int n : o.workers)
        for (Mode m : {Mode::Mirrored, Mode::Sync, Mode::SyncMpi, Mode::Async})
            if (has(m)) add(m, n);
    return points;
}

std::optional<std::string> checkOptions(const ScalingOptions& o, std::vector<Mode>& modes) {
    for (const auto& m : o.modes) {
        const auto mode = parseMode(m);
        if (!mode) return "--modes: unknown mode '" + m + "' (single, sync, async, sync-mpi, mirrored)";
        if (std::find(modes.begin(), modes.end(), *mode) == modes.end()) modes.push_back(*mode);
    }
    for (int n : o.workers)
        if (n < 1 || n > 64) return "--workers: " + std::to_string(n) + " is outside 1..64";
    if (o.threads < 1 || o.servers < 1 || o.repeats < 1 || o.maxEpochs < 1 || o.quickSteps < 1)
        return "--threads, --servers, --repeats, --max-epochs and --steps must be >= 1";
    if (access(o.cli.c_str(), X_OK) != 0)
        return "no trainbench-cli at " + o.cli +
               ": build it (cmake --build build/release --target trainbench-cli) or pass --cli PATH";
    for (const auto& id : o.workloads) {
        const auto& all = standardWorkloads();
        auto w = std::find_if(all.begin(), all.end(), [&](const Workload& x) { return x.id == id; });
        if (w == all.end()) return "--workload: unknown workload '" + id + "' (w1, w2, both)";
        if (!std::filesystem::exists(std::filesystem::path(o.experiments) / w->experiment))
            return "no " + w->experiment + " in " + o.experiments + " (pass --experiments DIR)";
    }
    return std::nullopt;
}

}  // namespace

int scalingSweep(const ScalingOptions& o) {
    std::vector<Mode> modes;
    if (const auto problem = checkOptions(o, modes)) {
        std::fprintf(stderr, "scaling: %s\n", problem->c_str());
        return 2;
    }
    std::vector<std::pair<const Workload*, std::vector<PointResults>>> sweep;
    size_t total = 0;
    for (const auto& w : standardWorkloads())
        if (std::find(o.workloads.begin(), o.workloads.end(), w.id) != o.workloads.end()) {
            sweep.emplace_back(&w, planPoints(w, o, modes));
            total += sweep.back().second.size() * static_cast<size_t>(o.repeats);
        }
    std::optional<profiler::RunStore> store;
    try {
        store.emplace(profiler::RunStore::open(o.db));
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "scaling: %s\n", e.what());
        return 2;
    }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("scaling sweep: %zu run(s) into %s (%s), %u cores\n", total,
                std::filesystem::absolute(o.db).c_str(), o.quick ? "quick" : "stop at target", cores);
    std::fflush(stdout);

    // Ctrl-C reaches the running job too (same process group): it stops after its step and is
    // recorded as stopped; the sweep then stops and prints what it has.
    struct sigaction ignore{}, previous{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &previous);
    size_t done = 0;
    bool stopped = false, failed = false;
    for (int round = 0; round < o.repeats && !stopped; ++round)
        for (auto& [workload, points] : sweep) {
            for (auto& p : points) {
                if (stopped) break;
                RunOutcome outcome = runPoint(p.point, o, *store);
                printProgress(++done, total, p.point, outcome, o.quick);
                stopped = outcome.exitCode == 130;
                failed = failed || !outcome.completed();
                p.runs.push_back(std::move(outcome));
            }
        }
    sigaction(SIGINT, &previous, nullptr);

    for (const auto& [workload, points] : sweep)
        printScalingTable(stdout, *workload, points, TableSettings{o.quick, cores});
    std::printf("\n  samples/s: steady state (runs.throughput), median [min-max] over the rounds. speed-up and eff.:\n"
                "  against the same mode with 1 worker (eff. = samples/s / (N x samples/s at 1)); vs single: against\n"
                "  one device with the same threads. batch/step: samples per update (sync N x share of the global\n"
                "  batch; async one worker's batch). time to target: training seconds, evaluation excluded; step:\n"
                "  updates to target; epochs: samples to target / training set (comparable across modes).\n"
                "  compute, comm, wait: share of training time each worker spent computing, in the gradient\n"
                "  exchange and waiting for peers (means over workers; comm counts exchange hidden behind backward).\n"
                "  staleness: async, mean / p95 updates between a worker's pull and its push. others: CPUs other\n"
                "  processes kept busy (max over the rounds; above ~0.3 the figures are not worth quoting).\n");
    if (stopped) std::printf("\nstopped: the sweep was interrupted; the table has the runs that finished.\n");
    return stopped ? 130 : failed ? 1 : 0;
}

}  // namespace trainbench::bench
