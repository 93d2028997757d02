// The steps of ExperimentCheck (see experimentcheck.h).
#include "tests/verdicts/experimentcheck.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/verdicts/machineload.h"

namespace trainbench::testing {

namespace {

std::string joined(const std::vector<std::string>& args) {
    std::string s = "trainbench-cli";
    for (const std::string& a : args) s += " " + a;
    return s;
}

std::string load(const RecordedRun& r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f samples/s, other processes %.2f cores", r.row.throughput.value_or(0.0),
                  r.otherCores);
    return buf;
}

// Best throughput of one side of a comparison, and whether any of its runs had a quiet machine.
struct Side {
    double best = 0.0;
    bool quietSeen = false;
    void add(const RecordedRun& r) {
        best = std::max(best, r.row.throughput.value_or(0.0));
        quietSeen = quietSeen || r.quiet();
    }
};

}  // namespace

bool RecordedRun::quiet() const { return otherCores < kQuietOtherCores; }

void skipTest(const std::string& why) {
    [&] { GTEST_SKIP() << why; }();
}

ExperimentCheck::ExperimentCheck(std::filesystem::path dir, std::string experiment, std::vector<std::string> overrides)
    : dir_(std::move(dir)), experiment_(std::move(experiment)), overrides_(std::move(overrides)),
      db_((dir_ / "runs.db").string()) {}

std::vector<std::string> ExperimentCheck::baseArgs() const {
    std::vector<std::string> args{"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/" + experiment_ + ".json",
                                  "--db", db_, "-q"};
    for (const std::string& o : overrides_) args.insert(args.end(), {"--set", o});
    return args;
}

std::string ExperimentCheck::appliedFile() const { return (dir_ / (experiment_ + "-action1.json")).string(); }

std::optional<RecordedRun> ExperimentCheck::record(std::vector<std::string> args) const {
    const std::string command = joined(args);
    if (timed_ && !waitForQuietMachine(kQuietWait)) {
        skipTest(experiment_ + ": other processes kept a core busy for " + std::to_string(kQuietWait.count()) +
                 " s; no fair time to run " + command);
        return std::nullopt;
    }
    const MeasuredCli m = runCliMeasured(std::move(args), dir_);
    if (m.result.exitCode != 0) {
        ADD_FAILURE() << command << " exited with " << m.result.exitCode << "\n" << m.result.err << m.result.out;
        return std::nullopt;
    }
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    const auto newest = std::max_element(runs.begin(), runs.end(),
                                         [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
    if (newest == runs.end()) {
        ADD_FAILURE() << command << " recorded no run";
        return std::nullopt;
    }
    return RecordedRun{*newest, m.otherCores};
}

std::string ExperimentCheck::profile(const RecordedRun& run) const {
    return runCli({"profile", std::to_string(run.row.id.value), "--db", db_}, dir_).out;
}

profiler::Verdict ExperimentCheck::verdict(const RecordedRun& run) const {
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    return store.verdict(run.row.id).value_or(profiler::Verdict{});
}

std::string ExperimentCheck::mismatch(const RecordedRun& run, profiler::BoundKind kind, const Changes& action) const {
    const std::string want = profiler::boundKindName(kind);
    const std::string stored = run.row.verdict.value_or("(none)");
    const profiler::Verdict v = verdict(run);
    if (stored.rfind(want + " (", 0) != 0 || v.verdict.kind != kind)
        return "verdict " + stored + ", expected " + want;
    if (v.actions.empty()) return "no actions";
    const profiler::Action& first = v.actions.front();
    bool same = first.changes.size() == action.size();
    for (size_t i = 0; same && i < action.size(); ++i)
        same = first.changes[i].key == action[i].first && first.changes[i].to == action[i].second;
    std::string expected;
    for (const auto& [key, to] : action) expected += (expected.empty() ? "" : ", ") + key + " -> " + to.dump();
    return same ? std::string() : "action 1 is \"" + first.title + "\", not " + expected;
}

bool ExperimentCheck::runUntilVerdict(profiler::BoundKind kind, const Changes& action) {
    std::string firstQuietMiss;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        const auto run = record(baseArgs());
        if (!run) return false;
        const std::string wrong = mismatch(*run, kind, action);
        if (wrong.empty()) {
            base_ = run;
            std::printf("[ verdict  ] %s: %s, action 1 \"%s\" (%s)\n", experiment_.c_str(),
                        run->row.verdict.value_or("").c_str(), verdict(*run).actions.front().title.c_str(),
                        load(*run).c_str());
            return true;
        }
        if (run->quiet()) {
            // This VM changes speed from one minute to the next, and the roofs are measured after
            // the steps: one quiet run in which the two disagree gets a second opinion, a second
            // such run fails the check.
            if (firstQuietMiss.empty() && attempt < kAttempts) {
                firstQuietMiss = wrong;
                std::printf("[ again    ] %s: %s on a quiet machine; one more run decides\n", experiment_.c_str(),
                            wrong.c_str());
                continue;
            }
            ADD_FAILURE() << experiment_ << ": " << wrong
                          << (firstQuietMiss.empty() ? "" : " (and in an earlier quiet run: " + firstQuietMiss + ")")
                          << "\n" << profile(*run);
            return false;
        }
        std::printf("[ busy     ] %s: %s, measured while other processes used %.2f cores; again\n",
                    experiment_.c_str(), wrong.c_str(), run->otherCores);
    }
    skipTest(experiment_ + ": other processes kept a core busy during " + std::to_string(kAttempts) +
             " runs, and its verdict and the ranking of its actions depend on timing");
    return false;
}

bool ExperimentCheck::applyAction1() {
    const auto run = record({"apply", std::to_string(base_->row.id.value), "--action", "1", "--db", db_, "-o",
                             appliedFile(), "--run", "-q"});
    if (!run) return false;
    if (run->row.name != base_->row.name + "-action1") {
        ADD_FAILURE() << "apply --run recorded " << run->row.name << ", not " << base_->row.name << "-action1";
        return false;
    }
    applied_ = run;
    return true;
}

bool ExperimentCheck::expectFaster(double factor) {
    Side base, changed;
    base.add(*base_);
    changed.add(*applied_);
    for (int pair = 1;; ++pair) {
        const bool faster = changed.best > factor * base.best;
        if (faster && base.quietSeen) {
            std::printf("[ faster   ] %s: %.0f -> %.0f samples/s, x%.2f (best of %d run(s) each)\n", experiment_.c_str(),
                        base.best, changed.best, changed.best / base.best, pair);
            return true;
        }
        if (pair == kAttempts) break;
        const auto b = record(baseArgs());
        const auto c = record({"run", appliedFile(), "--db", db_, "-q"});
        if (!b || !c) return false;
        std::printf("[ again    ] %s: %s; action 1: %s\n", experiment_.c_str(), load(*b).c_str(), load(*c).c_str());
        base.add(*b);
        changed.add(*c);
    }
    // Not faster even though the applied side had a quiet machine: base's best can only be lower
    // than its quiet value, so the action really did not help. Anything else was not measured fairly.
    if (changed.best > factor * base.best || !changed.quietSeen) {
        skipTest(experiment_ + ": other processes kept a core busy; best " + std::to_string(base.best) + " -> " +
                 std::to_string(changed.best) + " samples/s is no fair comparison");
        return false;
    }
    ADD_FAILURE() << experiment_ << ": action 1 gives " << changed.best << " samples/s against " << base.best
                  << " (best of " << kAttempts << " runs each), not more than x" << factor << "\nfirst run:\n"
                  << profile(*base_) << "\napplied run:\n"
                  << profile(*applied_);
    return false;
}

}  // namespace trainbench::testing
