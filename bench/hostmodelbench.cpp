#include "bench/hostmodelbench.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "bench/childprocess.h"

namespace trainbench::bench {

namespace {

struct Config {
    std::string name;
    std::vector<std::string> set;
};

// The strategies of the calibration check on this 2-core host.
std::vector<Config> configs() {
    return {{"single 1 thread", {"strategy.type=single", "train.threads=1"}},
            {"single 2 threads", {"strategy.type=single", "train.threads=2"}},
            {"mirrored 2x1", {"strategy.type=mirrored", "strategy.replicas=2", "strategy.threads_per_replica=1"}},
            {"multi_worker 2x1", {"strategy.type=multi_worker", "strategy.replicas=2", "strategy.threads_per_replica=1"}}};
}

std::vector<std::string> common(int steps) {
    return {"train.epochs=0", "train.max_steps=" + std::to_string(steps), "train.eval_every_steps=0",
            "train.eval_at_epoch_end=false", "train.target_accuracy=0", "data.drop_remainder=true",
            "strategy.batch_scope=global"};
}

std::vector<std::string> withSets(std::vector<std::string> argv, const std::vector<std::string>& sets) {
    for (const std::string& s : sets) {
        argv.push_back("--set");
        argv.push_back(s);
    }
    return argv;
}

// Median step seconds of the newest run named `name`, steps after the warm-up.
double measuredStep(const std::string& db, const std::string& name) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return 0.0;
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(h,
                       "SELECT step_seconds FROM steps WHERE step > 20 AND run_id = "
                       "(SELECT max(id) FROM runs WHERE name = ?1 AND status = 'completed')",
                       -1, &q, nullptr);
    sqlite3_bind_text(q, 1, name.c_str(), -1, SQLITE_TRANSIENT);
    std::vector<double> steps;
    while (sqlite3_step(q) == SQLITE_ROW) steps.push_back(sqlite3_column_double(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
    return median(steps);
}

void printCalibration(const std::string& db) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return;
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(h,
                       "SELECT h.threads, m.peak_gflops, m.bandwidth_gbs, h.model_json, h.replicas FROM host_models h "
                       "LEFT JOIN machines m ON m.host = h.host AND m.threads = h.threads ORDER BY h.threads, h.replicas",
                       -1, &q, nullptr);
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        const nlohmann::json m = nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(q, 3)));
        std::printf("\ncalibration, %d thread(s) x %d replica(s) side by side: roofs %.1f GFLOP/s, %.1f GB/s; "
                    "kernel fit RMS error %.0f %%\n",
                    sqlite3_column_int(q, 0), sqlite3_column_int(q, 4), sqlite3_column_double(q, 1),
                    sqlite3_column_double(q, 2),
                    m["kernel_fit_error"].get<double>() * 100);
        std::printf("  %-32s %8s %10s %10s %8s\n", "kind", "samples", "GFLOP/s", "GB/s", "overhead");
        auto row = [](const std::string& kind, const nlohmann::json& r) {
            const double f = r["seconds_per_flop"], b = r["seconds_per_byte"];
            std::printf("  %-32s %8d %10s %10s %6.1f us\n", kind.c_str(), r["samples"].get<int>(),
                        f > 0 ? std::to_string(static_cast<int>(std::lround(1e-9 / f))).c_str() : "-",
                        b > 0 ? std::to_string(static_cast<int>(std::lround(1e-9 / b))).c_str() : "-",
                        r["overhead_s"].get<double>() * 1e6);
        };
        for (const auto& [kind, r] : m["kernels"]["kinds"].items()) row(kind, r);
        row("(other matrix products)", m["kernels"]["matrix"]);
        row("(other kinds)", m["kernels"]["other"]);
        const nlohmann::json& k = m["kernels"];
        std::printf("  effective cache %.1f MiB (all replicas), bytes beyond it %.2fx as slow; outside the ops %.1f us "
                    "+ %.1f us per MB of activations a step\n",
                    m["cache"]["effective_cache_bytes"].get<double>() / (1 << 20), 1 + m["cache"]["slowdown"].get<double>(),
                    k["step_overhead_s"].get<double>() * 1e6, k["step_overhead_per_activation_byte_s"].get<double>() * 1e12);
        for (const char* link : {"shared_memory", "loopback"})
            std::printf("  link %-14s latency %6.1f us, %5.2f GB/s\n", link, m[link]["alpha_s"].get<double>() * 1e6,
                        1e-9 / m[link]["beta_s_per_byte"].get<double>());
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
}

}  // namespace

int hostModelBench(const HostModelBenchOptions& o) {
    std::string db = o.db;
    if (db.empty()) {
        db = (std::filesystem::temp_directory_path() / ("trainbench-host-model-" + std::to_string(getpid()) + ".db")).string();
        std::filesystem::remove(db);
    }
    const std::map<std::string, std::string> files{{"w1", "fmnist-mlp.json"}, {"w2", "fmnist-cnn.json"}};
    bool ok = true;
    std::printf("host model vs real runs: %d steps per run (first 20 left out), %d rounds, store %s\n"
                "each round calibrates the host afresh, then runs for real at once (this host's speed drifts\n"
                "from minute to minute); error: the median of the rounds' predicted / measured - 1\n",
                o.steps, o.rounds, db.c_str());
    std::printf("%-4s %-18s %12s %12s %8s %17s %14s\n", "", "strategy", "predicted", "measured", "error",
                "rounds' errors", "others' CPUs");
    std::vector<std::pair<std::string, std::string>> calibrations;  // label, store
    for (const std::string& w : o.workloads) {
        const std::string file = o.experiments + "/" + files.at(w);
        const std::vector<Config> all = configs();
        for (size_t ci = 0; ci < all.size(); ++ci) {
            const Config& c = all[ci];
            std::vector<std::string> sets = common(o.steps);
            sets.insert(sets.end(), c.set.begin(), c.set.end());
            const std::string calStore = db + ".calibration-" + w + "-" + std::to_string(ci);
            std::vector<double> predicted, measured, errors;
            double others = 0.0;
            std::string failed;
            const std::string name = "host-model-" + w + "-" + std::to_string(ci);
            for (int r = 0; r < o.rounds && failed.empty(); ++r) {
                // A fresh store makes the estimate calibrate the host now, right before the run.
                std::filesystem::remove(calStore);
                const ChildRun e = runChild(withSets(
                    {o.cli, "estimate", file, "--json", "--db", calStore, "--set", "device.type=cpu-host"}, sets));
                double p = 0.0;
                if (e.exitCode == 0) {
                    const nlohmann::json j = nlohmann::json::parse(e.out, nullptr, false);
                    if (j.is_array() && !j.empty()) p = j[0].value("step_seconds", 0.0);
                }
                if (!(p > 0.0)) {
                    failed = "estimate failed: " + e.err.substr(0, e.err.find('\n'));
                    break;
                }
                std::vector<std::string> sets2 = sets;
                sets2.push_back("name=" + name);
                const ChildRun run = runChild(withSets({o.cli, "run", file, "--db", db}, sets2));
                if (run.exitCode != 0) {
                    failed = "run failed (" + std::to_string(run.exitCode) + "): " + run.err;
                    break;
                }
                const double m = measuredStep(db, name);
                predicted.push_back(p);
                measured.push_back(m);
                if (m > 0) errors.push_back(p / m - 1);
                others = std::max(others, run.othersCpus);
            }
            if (!failed.empty() || errors.empty()) {
                ok = false;
                std::printf("%-4s %-18s   (%s)\n", w.c_str(), c.name.c_str(), failed.c_str());
                continue;
            }
            const auto [lo, hi] = std::minmax_element(errors.begin(), errors.end());
            std::printf("%-4s %-18s %9.3f ms %9.3f ms %+7.1f%% %+7.1f..%+6.1f%% %14.2f\n", w.c_str(), c.name.c_str(),
                        median(predicted) * 1e3, median(measured) * 1e3, median(errors) * 100, *lo * 100, *hi * 100,
                        others);
            std::fflush(stdout);
            calibrations.emplace_back(w + " " + c.name, calStore);
        }
    }
    for (const auto& [label, store] : calibrations) {
        std::printf("\n%s, last round's calibration:", label.c_str());
        printCalibration(store);
        std::filesystem::remove(store);
    }
    return ok ? 0 : 1;
}

}  // namespace trainbench::bench
