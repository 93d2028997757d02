// `trainbench-bench instrumentation-cost`: W1's training loop compiled without instrumentation (A),
// with the always-on part (B) and tracing every step (C), as child processes in turn A, B, C, A, B,
// C, ... so that the machine's drift hits all three alike.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "bench/childprocess.h"
#include "bench/steploop.h"

namespace trainbench::bench {

namespace {

constexpr double kAlwaysOnGoal = 1.01;
constexpr double kTracingGoal = 1.05;

struct Side {
    const char* label;
    std::vector<std::string> argv;
    std::vector<nlohmann::json> runs;  // each child's JSON line
    std::vector<double> period;        // its median loop period, ms
    double othersMax = 0.0;
};

std::string selfPath() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

std::string loadAverage() {
    std::ifstream f("/proc/loadavg");
    std::string one, five, fifteen;
    f >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

// The child's last line of output is its JSON result.
bool parseResult(const ChildRun& run, nlohmann::json& out) {
    std::string text = run.out;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const size_t start = text.rfind('\n');
    out = nlohmann::json::parse(text.substr(start == std::string::npos ? 0 : start + 1), nullptr, false);
    return out.is_object() && out.contains("period_ms_median");
}

struct Spread {
    double median, min, max;
};
Spread spread(const std::vector<double>& v) {
    return {trainbench::bench::median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

// Checks that each side is what it claims: A compiled out (its steps carry no breakdown), B and C
// compiled in (they do), C traced every step without losing events.
bool checkSides(const Side& a, const Side& b, const Side& c) {
    const nlohmann::json &ra = a.runs.back(), &rb = b.runs.back();
    if (ra.at("profiling").get<bool>() || ra.at("breakdown_ms_mean").get<double>() != 0.0) {
        std::fprintf(stderr, "error: %s has profiling compiled in (its steps carry a breakdown); configure it with "
                             "`cmake --preset noprof`\n", a.argv[0].c_str());
        return false;
    }
    if (!rb.at("profiling").get<bool>() || rb.at("breakdown_ms_mean").get<double>() <= 0.0) {
        std::fprintf(stderr, "error: %s has profiling compiled out; run the release build's trainbench-bench\n",
                     b.argv[0].c_str());
        return false;
    }
    const nlohmann::json& rc = c.runs.back();
    if (rc.value("trace_events", 0) <= 0) {
        std::fprintf(stderr, "error: the traced run recorded no events\n");
        return false;
    }
    if (rc.value("trace_dropped", 0) != 0)
        std::fprintf(stderr, "warning: the traced run dropped %lld events\n",
                     static_cast<long long>(rc.value("trace_dropped", 0)));
    return true;
}

int measure(const InstrumentationCostOptions& o, const std::string& self, int threads) {
    const std::vector<std::string> args{"step-loop", "-t", std::to_string(threads), "-s", std::to_string(o.steps)};
    auto argv = [&](const std::string& exe, bool trace) {
        std::vector<std::string> v{exe};
        v.insert(v.end(), args.begin(), args.end());
        if (trace) v.emplace_back("--trace");
        return v;
    };
    std::vector<Side> sides{{"A  compiled out (TRAINBENCH_PROFILING=OFF)", argv(o.noprof, false), {}, {}, 0.0},
                            {"B  always-on (phases + op statistics)", argv(self, false), {}, {}, 0.0},
                            {"C  tracing every step (+ zones, drained every step)", argv(self, true), {}, {}, 0.0}};
    const std::string loadBefore = loadAverage();
    for (int r = 0; r < o.rounds; ++r) {
        for (Side& s : sides) {
            const ChildRun run = runChild(s.argv);
            nlohmann::json result;
            if (run.exitCode != 0 || !parseResult(run, result)) {
                std::fprintf(stderr, "error: %s exited with %d\n%s%s", s.argv[0].c_str(), run.exitCode, run.out.c_str(),
                             run.err.c_str());
                return 1;
            }
            s.runs.push_back(result);
            s.period.push_back(result.at("period_ms_median").get<double>());
            s.othersMax = std::max(s.othersMax, run.othersCpus);
        }
        if (!checkSides(sides[0], sides[1], sides[2])) return 2;
        std::fprintf(stderr, "  round %d/%d (%d thread(s)): A %.3f  B %.3f  C %.3f ms\n", r + 1, o.rounds, threads,
                     sides[0].period.back(), sides[1].period.back(), sides[2].period.back());
    }

    std::printf("W1 training loop, %d thread(s), %d rounds of A, B, C (child processes, %lld steps each, first 20 not "
                "timed); median per-step loop period [min–max over rounds]:\n",
                threads, o.rounds, static_cast<long long>(o.steps));
    double others = 0.0;
    for (const Side& s : sides) {
        const Spread p = spread(s.period);
        std::vector<double> means;
        for (const nlohmann::json& j : s.runs) means.push_back(j.at("period_ms_mean").get<double>());
        std::printf("  %-52s %7.3f ms [%.3f–%.3f]  (mean period %.3f ms)\n", s.label, p.median, p.min, p.max,
                    median(means));
        others = std::max(others, s.othersMax);
    }
    nlohmann::json summary = {{"bench", "instrumentation-cost"}, {"threads", threads}, {"rounds", o.rounds},
                              {"steps", o.steps}};
    auto ratioLine = [&](const Side& x, const char* name, double goal) {
        std::vector<double> perRound;
        for (size_t i = 0; i < x.period.size(); ++i) perRound.push_back(x.period[i] / sides[0].period[i]);
        const Spread r = spread(perRound);
        const double ofMedians = median(x.period) / median(sides[0].period);
        // The same from each process's 10th-percentile period: the steps nothing else slowed.
        std::vector<double> p10;
        for (size_t i = 0; i < x.runs.size(); ++i)
            p10.push_back(x.runs[i].value("period_ms_p10", 0.0) / sides[0].runs[i].value("period_ms_p10", 1.0));
        // A spread wider than the margin the goal leaves means this machine cannot tell (yet).
        const bool decided = (r.max - r.min) / 2 <= goal - 1.0;
        const Spread q = spread(p10);
        std::printf("  %s/A %.4f [%.4f–%.4f]  (median of per-round ratios; ratio of medians %.4f)  goal <= %.2f %s%s\n",
                    name, r.median, r.min, r.max, ofMedians, goal, r.median <= goal ? "met" : "NOT met",
                    decided ? "" : " (inconclusive: the ratios spread wider than the goal's margin)");
        std::printf("       of 10th-percentile periods: %.4f [%.4f–%.4f]\n", q.median, q.min, q.max);
        summary[std::string(name) + "_over_A_p10"] = q.median;
        summary[std::string(name) + "_decided"] = decided;
        summary[std::string(name) + "_over_A"] = r.median;
        summary[std::string(name) + "_over_A_min"] = r.min;
        summary[std::string(name) + "_over_A_max"] = r.max;
    };
    ratioLine(sides[1], "B", kAlwaysOnGoal);
    ratioLine(sides[2], "C", kTracingGoal);
    const nlohmann::json& traced = sides[2].runs.back();
    std::printf("  trace: %.1f events per step, %.1f MB file for %lld steps (written after the loop, not timed)\n",
                traced.value("trace_events", 0.0) / static_cast<double>(o.steps),
                traced.value("trace_bytes", 0.0) / 1e6, static_cast<long long>(o.steps));
    std::printf("  others busy: up to %.2f CPUs during the runs; load average before %s, after %s%s\n", others,
                loadBefore.c_str(), loadAverage().c_str(),
                others > 0.3 ? "  (machine not quiet: rerun before quoting)" : "");
    summary["A_ms"] = median(sides[0].period);
    summary["B_ms"] = median(sides[1].period);
    summary["C_ms"] = median(sides[2].period);
    summary["others_busy_max"] = others;
    std::printf("%s\n", summary.dump().c_str());
    return 0;
}

}  // namespace

int instrumentationCost(const InstrumentationCostOptions& o) {
    if (!std::filesystem::exists(o.noprof)) {
        std::fprintf(stderr,
                     "error: %s not found: the comparator is trainbench-bench built with the instrumentation compiled "
                     "out. Build it with\n  cmake --preset noprof && cmake --build --preset noprof\n(from the source "
                     "directory), or pass --noprof PATH.\n",
                     o.noprof.c_str());
        return 2;
    }
    const std::string self = selfPath();
    if (self.empty()) {
        std::fprintf(stderr, "error: cannot find this program's own path (/proc/self/exe)\n");
        return 2;
    }
    for (int threads : o.threads)
        if (const int rc = measure(o, self, threads); rc != 0) return rc;
    return 0;
}

}  // namespace trainbench::bench
