// `trainbench-cli runs`, `show` and `export`: reading the run store.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/applyloadtest.h"
#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/cli/texttable.h"
#include "app/run/progressprinter.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/strategy/strategykind.h"
#include "engine/util/errors.h"
#include "profiler/format/numberformat.h"
#include "profiler/plan/quantities.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "profiler/verdict/stepsample.h"

namespace trainbench::cli {

namespace runattr = profiler::runattr;

namespace {

std::string pct(const std::optional<double>& v) { return v ? fmt("%.2f%%", 100.0 * *v) : "-"; }
std::string secs(const std::optional<double>& v) { return v ? fmt("%.1f s", *v) : "-"; }
std::string num(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "-"; }
std::string rate(const std::optional<double>& v) { return v ? fmt("%.0f", *v) : "-"; }
std::string shortTime(const std::string& iso) { return iso.size() >= 16 ? iso.substr(0, 10) + " " + iso.substr(11, 5) : iso; }

// The input pipeline's settings and what each stage did over the whole run.
void printInputPipeline(profiler::RunStore& store, profiler::RunId id) {
    std::vector<std::pair<std::string, std::string>> attributes;
    for (auto& kv : store.attributes(id))
        if (kv.first.starts_with(runattr::kInputGroup) || kv.first.starts_with(runattr::kStorageGroup)) attributes.push_back(kv);
    const auto rows = store.inputStages(id);
    if (attributes.empty() && rows.empty()) return;
    std::printf("\ninput pipeline\n");
    for (const auto& [key, value] : attributes) {
        if (key == runattr::kInputAutotuneTrials) continue;
        std::printf("  %-30s %s\n", key.c_str(), value.c_str());
    }
    for (const auto& [key, value] : attributes)
        if (key == runattr::kInputAutotuneTrials) {
            std::string indented = value;
            for (size_t at = indented.find('\n'); at != std::string::npos; at = indented.find('\n', at + 5))
                indented.replace(at, 1, "\n    ");
            std::printf("  autotune trials:\n    %s\n", indented.c_str());
        }
    struct Total {
        double seconds = 0, fillSum = 0;
        int64_t items = 0, bytes = 0, fillN = 0;
    };
    std::vector<std::pair<std::string, Total>> totals;  // in first-seen order
    for (const auto& row : rows) {
        auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& t) { return t.first == row.stage.stage; });
        if (it == totals.end()) it = totals.insert(totals.end(), {row.stage.stage, Total{}});
        it->second.seconds += row.stage.seconds;
        it->second.items += row.stage.items;
        it->second.bytes += row.stage.bytes;
        if (row.stage.fill >= 0) {
            it->second.fillSum += row.stage.fill;
            ++it->second.fillN;
        }
    }
    if (totals.empty()) return;
    // In pipeline order, the way data flows.
    auto rank = [](const std::string& stage) {
        static const char* order[] = {"read", "map", "shuffle", "batch", "prefetch"};
        for (int i = 0; i < 5; ++i)
            if (stage == order[i]) return i;
        return 5;
    };
    std::stable_sort(totals.begin(), totals.end(), [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    TextTable t({"STAGE", "BUSY TIME", "ITEMS", "MB", "MEAN QUEUE FILL"});
    for (const auto& [name, tot] : totals)
        t.add({name, fmt("%.2f s", tot.seconds), std::to_string(tot.items), fmt("%.1f", static_cast<double>(tot.bytes) / 1e6),
               tot.fillN > 0 ? fmt("%.0f %%", 100.0 * tot.fillSum / static_cast<double>(tot.fillN)) : "-"});
    t.print(stdout);
}

// Where each replica's time went over the run, for data-parallel runs: a replica that computes
// longer than the others (a straggler) makes the others wait.
void printReplicas(profiler::RunStore& store, const profiler::RunRow& r) {
    const auto rows = store.replicaSteps(r.id);
    if (rows.empty()) return;
    struct Total {
        double compute = 0, comm = 0, wait = 0;
        int64_t samples = 0, steps = 0;
    };
    std::vector<Total> totals;
    for (const auto& row : rows) {
        const size_t rank = static_cast<size_t>(row.replica.rank);
        if (totals.size() <= rank) totals.resize(rank + 1);
        Total& t = totals[rank];
        t.compute += row.replica.compute_seconds;
        t.comm += row.replica.comm_seconds;
        t.wait += row.replica.wait_seconds;
        t.samples += row.replica.samples;
        ++t.steps;
    }
    if (engine::parseStrategyKind(r.strategy) == engine::StrategyKind::ParameterServer) {
        // Asynchronous: each step ran on one worker; nothing waits for peers.
        std::printf("\nworkers (%s, %s)\n", r.strategy.c_str(), r.devices.c_str());
        if (r.comm_seconds && r.train_seconds && *r.train_seconds > 0)
            std::printf("  pull + push     %s over all steps (mean %s per step)\n", secs(r.comm_seconds).c_str(),
                        fmt("%.2f ms", r.steps && *r.steps > 0 ? 1e3 * *r.comm_seconds / static_cast<double>(*r.steps) : 0.0).c_str());
        TextTable t({"WORKER", "STEPS", "SAMPLES", "COMPUTE", "PULL + PUSH", "PER STEP"});
        for (size_t k = 0; k < totals.size(); ++k) {
            const Total& tot = totals[k];
            if (tot.steps == 0) continue;
            t.add({std::to_string(k), std::to_string(tot.steps), std::to_string(tot.samples), fmt("%.2f s", tot.compute),
                   fmt("%.2f s", tot.comm),
                   fmt("%.2f ms", 1e3 * (tot.compute + tot.comm) / static_cast<double>(tot.steps))});
        }
        t.print(stdout);
        return;
    }
    std::printf("\nreplicas (%s, %s)\n", r.strategy.c_str(), r.devices.c_str());
    if (r.comm_seconds && r.train_seconds && *r.train_seconds > 0)
        std::printf("  all-reduce      %s per replica (%.1f %% of training time), waiting for peers %s (%.1f %%)\n",
                    secs(r.comm_seconds).c_str(), 100.0 * *r.comm_seconds / *r.train_seconds,
                    secs(r.wait_seconds).c_str(), 100.0 * r.wait_seconds.value_or(0) / *r.train_seconds);
    TextTable t({"REPLICA", "SAMPLES", "COMPUTE", "ALL-REDUCE", "WAITING FOR PEERS", "WAITING / STEP"});
    for (size_t k = 0; k < totals.size(); ++k) {
        const Total& tot = totals[k];
        t.add({std::to_string(k), std::to_string(tot.samples), fmt("%.2f s", tot.compute), fmt("%.2f s", tot.comm),
               fmt("%.2f s", tot.wait), fmt("%.2f ms", tot.steps ? 1e3 * tot.wait / static_cast<double>(tot.steps) : 0.0)});
    }
    t.print(stdout);
}

// A parameter_server run's updates: how stale the gradients were, and what the coordinator had to
// rerun (run_attributes ps.*, written when the run ends).
void printParameterServers(profiler::RunStore& store, const profiler::RunRow& r) {
    if (engine::parseStrategyKind(r.strategy) != engine::StrategyKind::ParameterServer) return;
    std::map<std::string, std::string> a;
    for (const auto& [key, value] : store.attributes(r.id))
        if (key.starts_with(runattr::kPsGroup) || key.starts_with(runattr::kVirtualGroup)) a[key] = value;
    if (a.empty()) return;
    auto get = [&](const char* k) { return a.count(k) ? a[k] : std::string("-"); };
    std::printf("\nparameter servers (%s)\n", get(runattr::kPsServers).c_str());
    std::printf("  updates         %s\n", get(runattr::kPsUpdates).c_str());
    std::printf("  staleness       mean %s, median %s, p95 %s, max %s (updates between a worker's pull and its push)\n",
                get(runattr::kPsStalenessMean).c_str(), get(runattr::kPsStalenessP50).c_str(), get(runattr::kPsStalenessP95).c_str(),
                get(runattr::kPsStalenessMax).c_str());
    std::printf("  lost workers    %s (steps rerun on another worker: %s)\n", get(runattr::kPsLostWorkers).c_str(),
                get(runattr::kPsRescheduledSteps).c_str());
    // Emulated: what bounds the rounds of the virtual clock (docs/devices.md).
    auto millis = [&](const char* k) {
        try {
            return fmt("%.3g ms", 1e3 * std::stod(get(k)));
        } catch (const std::exception&) {
            return get(k);
        }
    };
    if (a.count(runattr::kVirtualPsBound))
        std::printf("  bound by        %s (virtual: a round of one step per worker %s, a worker's own step %s)\n",
                    get(runattr::kVirtualPsBound).c_str(), millis(runattr::kVirtualRoundSeconds).c_str(),
                    millis(runattr::kVirtualWorkerStepSeconds).c_str());
}

}  // namespace

int runsCommand(const std::string& db, const std::string& status, int limit) {
    int code = kExitOk;
    auto store = openExisting(db, code, /*emptyIsOk=*/true);
    if (!store) return code;
    try {
        if (!status.empty() && !profiler::parseRunStatus(status)) {
            std::fprintf(stderr, "--status: unknown status '%s' (running, completed, failed, interrupted, stopped)\n",
                         status.c_str());
            return kExitUsage;
        }
        TextTable t({"ID", "NAME", "STATUS", "MODEL", "BATCH", "THREADS", "STEPS", "ACCURACY", "TIME TO TARGET",
                     "SAMPLES/S", "STARTED (UTC)"});
        int shown = 0;
        for (const auto& r : store->listRuns()) {
            if (!status.empty() && profiler::runStatusName(r.status) != status) continue;
            if (limit > 0 && shown >= limit) break;
            ++shown;
            std::string ttt = r.time_to_target ? secs(r.time_to_target) + " @" + pct(r.target_accuracy)
                              : r.target_accuracy ? "not reached" : "-";
            t.add({std::to_string(r.id.value), r.name, std::string(profiler::runStatusName(r.status)),
                   r.model.value_or("-"), num(r.global_batch), num(r.threads), num(r.steps), pct(r.final_accuracy),
                   ttt, rate(r.throughput), shortTime(r.started_at)});
        }
        if (shown == 0) {
            std::printf("no runs%s in %s\n", status.empty() ? "" : (" with status " + status).c_str(), db.c_str());
            return kExitOk;
        }
        t.print(stdout);
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    }
    return kExitOk;
}

int showCommand(const std::string& db, const std::string& run) {
    int code = kExitOk;
    auto store = openExisting(db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    try {
        auto r = findOrComplain(*store, run, code);
        if (!r) return code;
        if (r->kind == "serve") {  // a load test: its points and verdict (profile shows the same)
            printServingProfile(*store, *r, db);
            return kExitOk;
        }
        std::printf("run %lld  %s\n", static_cast<long long>(r->id.value), r->name.c_str());
        std::printf("  status          %s%s\n", std::string(profiler::runStatusName(r->status)).c_str(),
                    r->stop_reason ? (" (" + *r->stop_reason + ")").c_str() : "");
        if (r->message) std::printf("  message         %s\n", r->message->c_str());
        std::printf("  experiment      %s\n", r->experiment_file.value_or("-").c_str());
        std::printf("  model           %s, batch %s, %s thread(s), %s, %s\n", r->model.value_or("-").c_str(),
                    num(r->global_batch).c_str(), num(r->threads).c_str(), r->strategy.c_str(), r->devices.c_str());
        std::printf("  host            %s (pid %lld)\n", r->host.c_str(), static_cast<long long>(r->pid));
        std::printf("  started         %s\n", r->started_at.c_str());
        std::printf("  ended           %s\n", r->ended_at.value_or("-").c_str());
        std::printf("  steps           %s (%s epochs complete)\n", num(r->steps).c_str(), num(r->epochs).c_str());
        std::printf("  test accuracy   %s (best %s)\n", pct(r->final_accuracy).c_str(), pct(r->best_accuracy).c_str());
        if (r->target_accuracy)
            std::printf("  time to %-7s %s%s\n", pct(r->target_accuracy).c_str(),
                        r->time_to_target ? secs(r->time_to_target).c_str() : "not reached",
                        r->step_at_target ? (" (step " + std::to_string(*r->step_at_target) + ")").c_str() : "");
        std::printf("  training time   %s, evaluation %s\n", secs(r->train_seconds).c_str(), secs(r->eval_seconds).c_str());
        if (r->clock == "virtual")
            std::printf("  clock           virtual: %s on %s device(s); this host took %s\n",
                        r->device_type.value_or("-").c_str(), num(r->device_count).c_str(), secs(r->host_seconds).c_str());
        if (r->cost)
            std::printf("  cost            %s (%s device(s) at $%.2f/h%s)\n", profiler::formatMoney(*r->cost).c_str(),
                        num(r->device_count).c_str(),
                        r->price_per_device_hour.value_or(0.0),
                        r->host_price_per_hour && *r->host_price_per_hour > 0
                            ? fmt(" + host at $%.2f/h", *r->host_price_per_hour).c_str()
                            : "");
        if (r->warm_start_run)
            std::printf("  warm start      from run %lld (trainbench-cli show %lld)\n",
                        static_cast<long long>(*r->warm_start_run), static_cast<long long>(*r->warm_start_run));
        std::printf("  throughput      %s samples/s\n", rate(r->throughput).c_str());
        if (r->input_seconds && r->train_seconds && *r->train_seconds > 0)
            std::printf("  input wait      %s (%.1f %% of training time)\n", secs(r->input_seconds).c_str(),
                        100.0 * *r->input_seconds / *r->train_seconds);
        if (r->skipped_records && *r->skipped_records > 0)
            std::printf("  skipped         %lld corrupt record(s)\n", static_cast<long long>(*r->skipped_records));
        printInputPipeline(*store, r->id);
        printReplicas(*store, *r);
        printParameterServers(*store, *r);
        // Everything else recorded about the run: checkpoints, restarts of a job.
        bool heading = false;
        for (const auto& [key, value] : store->attributes(r->id)) {
            if (key.starts_with(runattr::kInputGroup) || key.starts_with(runattr::kStorageGroup) ||
                key.starts_with(runattr::kPsGroup))
                continue;
            if (!heading) std::printf("\nrecorded\n");
            heading = true;
            std::printf("  %-30s %s\n", key.c_str(), value.c_str());
        }

        auto evals = store->evals(r->id);
        std::printf("\nevaluations (%zu)\n", evals.size());
        if (!evals.empty()) {
            // Bars span the run's own accuracy range (from a round 10 % below its lowest value), so
            // the shape of the curve shows even when every value is between 80 and 90 %.
            double lo = 1.0, hi = 0.0;
            for (const auto& e : evals) {
                lo = std::min(lo, e.accuracy);
                hi = std::max(hi, e.accuracy);
            }
            lo = std::floor(lo * 10.0) / 10.0;
            const double span = std::max(hi - lo, 1e-9);
            char barTitle[48];
            std::snprintf(barTitle, sizeof barTitle, "%.0f%% .. %.2f%%", 100 * lo, 100 * hi);
            TextTable t({"STEP", "EPOCH", "TRAIN TIME", "TEST LOSS", "TEST ACCURACY", barTitle});
            for (const auto& e : evals) {
                const int bar = static_cast<int>(std::lround((e.accuracy - lo) / span * 40.0));
                t.add({std::to_string(e.step), std::to_string(e.epoch + 1), fmt("%.1f s", e.wall_seconds),
                       fmt("%.4f", e.loss), fmt("%.2f%%", 100.0 * e.accuracy), std::string(static_cast<size_t>(bar), '#')});
            }
            t.print(stdout);
        }
        std::printf("\nconfig\n%s\n", nlohmann::json::parse(r->config_json).dump(2).c_str());
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    }
    return kExitOk;
}

int exportCommand(const ExportArgs& args) {
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    try {
        auto r = findOrComplain(*store, args.run, code);
        if (!r) return code;
        std::ostringstream out;
        out.precision(9);
        if (args.what == "input") {
            out << "step,stage,seconds,items,bytes,fill\n";
            for (const auto& row : store->inputStages(r->id)) {
                out << row.step << ',' << row.stage.stage << ',' << row.stage.seconds << ',' << row.stage.items << ','
                    << row.stage.bytes << ',';
                if (row.stage.fill >= 0) out << row.stage.fill;
                out << '\n';
            }
        } else if (args.what == "replicas") {
            out << "step,rank,samples,compute_seconds,comm_seconds,wait_seconds";
            for (const profiler::StepPhase& p : profiler::kStepPhases)
                if (p.perReplica) out << ',' << p.column;
            out << '\n';
            for (const auto& row : store->replicaSteps(r->id)) {
                out << row.step << ',' << row.replica.rank << ',' << row.replica.samples << ','
                    << row.replica.compute_seconds << ',' << row.replica.comm_seconds << ',' << row.replica.wait_seconds;
                for (const profiler::StepPhase& p : profiler::kStepPhases)
                    if (p.perReplica) out << ',' << row.replica.*p.seconds;
                out << '\n';
            }
        } else if (args.what == "updates") {
            out << "step,server,worker,attempt,staleness\n";
            for (const auto& row : store->psUpdates(r->id))
                out << row.step << ',' << row.update.server << ',' << row.update.worker << ',' << row.update.attempt << ','
                    << row.update.staleness << '\n';
        } else if (args.what == "evals") {
            out << "step,epoch,split,loss,accuracy,samples,eval_seconds,wall_seconds\n";
            for (const auto& e : store->evals(r->id))
                out << e.step << ',' << e.epoch << ',' << e.split << ',' << e.loss << ',' << e.accuracy << ','
                    << e.samples << ',' << e.eval_seconds << ',' << e.wall_seconds << '\n';
        } else {
            // The steps table's columns in its order: input_seconds beside step_seconds (schema 1), the
            // other phases after the run's columns, in the order they were added (kStepPhases').
            const profiler::StepPhase& input = profiler::kStepPhases.front();
            const auto later = std::span(profiler::kStepPhases).subspan(1);
            out << "step,epoch,loss,step_seconds," << input.column
                << ",samples,samples_per_second,learning_rate,wall_seconds,comm_seconds,wait_seconds";
            for (const profiler::StepPhase& p : later) out << ',' << p.column;
            out << '\n';
            for (const auto& s : store->steps(r->id)) {
                out << s.step << ',' << s.epoch << ',' << s.loss << ',' << s.step_seconds << ',' << s.*input.seconds << ','
                    << s.samples << ',' << s.samples_per_second << ',' << s.learning_rate << ',' << s.wall_seconds << ','
                    << s.comm_seconds << ',' << s.wait_seconds;
                for (const profiler::StepPhase& p : later) out << ',' << s.*p.seconds;
                out << '\n';
            }
        }
        if (args.output.empty()) {
            std::cout << out.str();
        } else {
            try {
                engine::writeFileAtomically(args.output, out.str(), {.what = "CSV export"});
            } catch (const engine::FileWriteError& e) {
                std::fprintf(stderr, "%s\n", e.what());
                return kExitIo;
            }
            std::fprintf(stderr, "wrote %s (%s of run %lld)\n", args.output.c_str(), args.what.c_str(),
                         static_cast<long long>(r->id.value));
        }
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
