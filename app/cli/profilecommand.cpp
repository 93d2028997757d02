// `trainbench-cli profile RUN`: where a run's time went, its ops against the machine's roofline, its
// memory, the verdict with its evidence and timeline, and the ranked actions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "app/cli/applyloadtest.h"
#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/cli/texttable.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/storeerror.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::cli {

namespace runattr = profiler::runattr;

namespace {


std::string bytes(double b) {
    if (b >= 1024.0 * 1024 * 1024) return fmt("%.2f GiB", b / (1024.0 * 1024 * 1024));
    if (b >= 1024.0 * 1024) return fmt("%.1f MiB", b / (1024.0 * 1024));
    return fmt("%.0f KiB", b / 1024.0);
}

std::string changeText(const profiler::Change& c) {
    return c.key + ": " + (c.from.is_null() ? std::string("(unset)") : c.from.dump()) + " -> " + c.to.dump();
}

// Mean step-time breakdown over the steps after warm-up (all of them for a short run).
void printBreakdown(const profiler::ProfileInput& in) {
    const size_t skip = in.steps.size() > 40 ? std::min<size_t>(20, in.steps.size() / 10) : 0;
    constexpr auto phases = profiler::kInStepPhases;
    double step = 0, parts[phases.size()] = {}, eval = 0, checkpoint = 0;
    size_t n = 0;
    for (size_t i = skip; i < in.steps.size(); ++i) {
        const profiler::StepSample& s = in.steps[i];
        step += s.step_seconds;
        for (size_t k = 0; k < phases.size(); ++k) parts[k] += s.*phases[k].seconds;
        eval += s.eval_seconds;
        checkpoint += s.checkpoint_seconds;
        ++n;
    }
    if (n == 0 || step <= 0) return;
    std::printf("\nstep time (steps %lld-%lld, mean %.3f ms)\n", static_cast<long long>(in.steps[skip].step),
                static_cast<long long>(in.steps.back().step), 1e3 * step / static_cast<double>(n));
    for (size_t k = 0; k < phases.size(); ++k) {
        const double share = parts[k] / step;
        const int bar = static_cast<int>(std::lround(share * 40));
        std::printf("  %-14s %9.3f ms %6.1f %%  %s\n", std::string(phases[k].name).c_str(),
                    1e3 * parts[k] / static_cast<double>(n), 100 * share, std::string(static_cast<size_t>(bar), '#').c_str());
    }
    if (eval + checkpoint > 0)
        std::printf("  outside steps: evaluation %.2f s, checkpoints %.2f s (%.1f %% of the time)\n", eval, checkpoint,
                    100 * (eval + checkpoint) / (step + eval + checkpoint));
}

// Which steps the op statistics cover: those after the measuring process's warm-up.
std::string opSteps(const profiler::ProfileInput& in) {
    if (in.ops_first_step <= 0 || in.steps.empty()) return "";
    return ", steps " + std::to_string(in.ops_first_step) + "-" + std::to_string(in.steps.back().step);
}

void printOps(const profiler::ProfileInput& in) {
    if (in.ops.empty()) return;
    std::vector<engine::prof::OpRow> ops = in.ops;
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
    double total = 0;
    for (const auto& o : ops) total += o.seconds;
    const double ridge = in.roofs ? in.roofs->ridge() : 0.0;
    const bool emulated = in.experiment.contains("device") && in.experiment["device"].value("type", "cpu") != "cpu";
    if (in.roofs && emulated)  // the device's roofs and the virtual clock's op times
        std::printf("\nops on the virtual clock (roofs of one %s: %.0f GFLOP/s, %.1f GB/s; ridge %.1f FLOP/B)\n",
                    in.roofs->host.c_str(), in.roofs->peak_gflops, in.roofs->bandwidth_gbs, ridge);
    else if (in.roofs)
        std::printf("\nops%s (roofs at %d thread(s): %.0f GFLOP/s, %.1f GB/s; ridge %.1f FLOP/B)\n", opSteps(in).c_str(),
                    in.roofs->threads, in.roofs->peak_gflops, in.roofs->bandwidth_gbs, ridge);
    else
        std::printf("\nops%s (machine not calibrated: no roofline)\n", opSteps(in).c_str());
    TextTable t({"  op", "shape", "calls", "ms/call", "time", "GFLOP/s", "GB/s", "FLOP/B", "roofline"});
    for (const auto& o : ops) {
        std::string side = "-";
        if (in.roofs && o.flops > 0) {
            const double roof = std::min(in.roofs->peak_gflops, o.intensity() * in.roofs->bandwidth_gbs);
            side = std::string(o.intensity() < ridge ? "memory" : "compute") + fmt(" %.0f %% of roof", 100 * o.gflops() / roof);
        } else if (in.roofs && o.bytes > 0) {
            side = "memory" + fmt(" %.0f %% of roof", 100 * o.gbytesPerSecond() / in.roofs->bandwidth_gbs);
        }
        t.add({"  " + o.kind, o.shape, std::to_string(o.calls), fmt("%.3f", 1e3 * o.seconds / static_cast<double>(o.calls)),
               fmt("%.1f %%", total > 0 ? 100 * o.seconds / total : 0.0), fmt("%.1f", o.gflops()),
               fmt("%.1f", o.gbytesPerSecond()), fmt("%.2f", o.intensity()), side});
    }
    t.print(stdout);
}

void printMemory(const profiler::ProfileInput& in, const std::map<std::string, std::string>& attrs) {
    if (in.memory) {
        const profiler::MemoryFootprint& m = *in.memory;
        std::printf("\nmemory (device: %s, %s)\n", m.device_source.c_str(), bytes(m.device_bytes).c_str());
        std::printf("  parameters %s, gradients %s, optimizer state %s, activations %s (one batch)\n",
                    bytes(m.params_bytes).c_str(), bytes(m.grads_bytes).c_str(), bytes(m.optimizer_bytes).c_str(),
                    bytes(m.activation_bytes).c_str());
        std::printf("  by shapes %s (%.1f %% of the device); peak resident %s (%.1f %%)\n", bytes(m.modelBytes()).c_str(),
                    m.device_bytes > 0 ? 100 * m.modelBytes() / m.device_bytes : 0.0, bytes(m.peak_rss_bytes).c_str(),
                    m.device_bytes > 0 ? 100 * m.peak_rss_bytes / m.device_bytes : 0.0);
        if (m.swapped_pages > 0 || m.major_faults > 0)
            std::printf("  swapping: %lld pages swapped, %lld major faults while training\n",
                        static_cast<long long>(m.swapped_pages), static_cast<long long>(m.major_faults));
    }
    auto get = [&](const char* k) { auto it = attrs.find(k); return it == attrs.end() ? std::string() : it->second; };
    if (get(runattr::kHwAvailable) == "true") {
        const double cycles = std::stod(get(runattr::kHwCycles).empty() ? "0" : get(runattr::kHwCycles));
        const double instr = std::stod(get(runattr::kHwInstructions).empty() ? "0" : get(runattr::kHwInstructions));
        const double refs = std::stod(get(runattr::kHwCacheReferences).empty() ? "0" : get(runattr::kHwCacheReferences));
        const double misses = std::stod(get(runattr::kHwCacheMisses).empty() ? "0" : get(runattr::kHwCacheMisses));
        std::printf("\nhardware counters\n  %.3g cycles, %.3g instructions (IPC %.2f), cache misses %.1f %% of %.3g references\n",
                    cycles, instr, cycles > 0 ? instr / cycles : 0.0, refs > 0 ? 100 * misses / refs : 0.0, refs);
    } else if (!get(runattr::kHwUnavailableReason).empty()) {
        std::printf("\nhardware counters: not available (%s)\n", get(runattr::kHwUnavailableReason).c_str());
    }
}

void printVerdict(const profiler::Verdict& v, int64_t runId, const std::string& db) {
    auto headline = [](const profiler::Finding& f) { return profiler::verdictLabel(f.kind, f.severity); };
    std::printf("\nverdict: %s\n  %s\n", headline(v.verdict).c_str(), v.verdict.summary.c_str());
    for (const profiler::Evidence& e : v.verdict.evidence) std::printf("  - %s\n", e.text.c_str());
    for (const profiler::Finding& f : v.findings) {
        std::printf("\nalso: %s\n  %s\n", headline(f).c_str(), f.summary.c_str());
        for (const profiler::Evidence& e : f.evidence) std::printf("  - %s\n", e.text.c_str());
    }
    if (v.windows.size() > 1) {
        std::printf("\ntimeline\n");
        for (const profiler::Finding& w : v.windows)
            std::printf("  steps %6lld-%-6lld %-26s %s\n", static_cast<long long>(w.first_step),
                        static_cast<long long>(w.last_step), headline(w).c_str(), w.summary.c_str());
    }
    if (v.actions.empty()) return;
    std::printf("\nactions (trainbench-cli apply %lld --action N --db %s)\n", static_cast<long long>(runId), db.c_str());
    int n = 1;
    for (const profiler::Action& a : v.actions) {
        std::printf("  %d. %s\n", n++, a.title.c_str());
        for (const profiler::Change& c : a.changes) std::printf("       %s\n", changeText(c).c_str());
        if (a.changes.empty()) std::printf("       (no change to the experiment file: hardware or the model's design)\n");
        if (!a.expected.empty()) std::printf("       expected: %s\n", a.expected.c_str());
    }
}

}  // namespace

int profileCommand(const ProfileArgs& args) {
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    try {
        auto r = findOrComplain(*store, args.run, code);
        if (!r) return code;
        if (r->kind == "serve") {  // a load test: points, not steps
            printServingProfile(*store, *r, args.db);
            return kExitOk;
        }
        const profiler::ProfileInput in = store->profileInput(r->id);
        std::optional<profiler::Verdict> v = args.reclassify ? std::nullopt : store->verdict(r->id);
        if (!v && !in.steps.empty()) {
            v = profiler::classify(in);
            keepVerdict(*store, r->id, *v);
        }
        std::printf("run %lld  %s (%s), %s on %s, %zu steps\n", static_cast<long long>(r->id.value), r->name.c_str(),
                    std::string(profiler::runStatusName(r->status)).c_str(), r->strategy.c_str(), r->devices.c_str(),
                    in.steps.size());
        if (in.steps.empty()) {
            std::printf("  no steps recorded: nothing to profile\n");
            return kExitOk;
        }
        std::map<std::string, std::string> attrs;
        for (auto& [k, val] : store->attributes(r->id)) attrs.emplace(k, val);
        printBreakdown(in);
        printOps(in);
        printMemory(in, attrs);
        printVerdict(*v, r->id.value, args.db);
        return kExitOk;
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    }
}

}  // namespace trainbench::cli
