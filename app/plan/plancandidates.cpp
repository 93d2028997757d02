#include "app/plan/plancandidates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "profiler/grouping/configkeys.h"
#include "profiler/format/numberformat.h"

namespace trainbench::app {

namespace {

using profiler::PlanCandidate;
using profiler::PlanSource;
using profiler::RunTta;
using profiler::SeedGroup;

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
    return buf;
}

// "run 3" or "runs 3, 5, 7".
std::string idsText(const std::vector<profiler::RunId>& ids) {
    std::string s = ids.size() == 1 ? "run " : "runs ";
    for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i].value);
    return s;
}

std::string runsWord(int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

// Why a group of runs has no time to target.
std::string whyNot(const profiler::GroupStatistic& s, int pending, const std::vector<size_t>& counted,
                   const std::vector<RunTta>& runs) {
    if (s.runs == 0) return pending > 0 ? runsWord(pending) + " still running, none at the target yet" : "no runs";
    std::optional<double> best;
    bool evaluated = false;
    for (size_t i : counted)
        if (runs[i].tta.best_accuracy) {
            evaluated = true;
            best = std::max(best.value_or(0.0), *runs[i].tta.best_accuracy);
        }
    if (!evaluated) return "no test evaluations recorded in " + runsWord(s.runs);
    if (s.reached == 0) return "never reached the target (best " + percent(*best) + " in " + runsWord(s.runs) + ")";
    return "only " + std::to_string(s.reached) + " of " + runsWord(s.runs) +
           " reached the target: a run kept in the mean did not (best " + percent(*best) + ")";
}

PlanCandidate fromGroup(const SeedGroup& g, const std::vector<RunTta>& runs, CandidateOptions options) {
    PlanCandidate c;
    const profiler::RunRow& first = runs[g.members.front()].row;
    c.label = g.label;
    c.devices = first.devices;
    c.strategy = first.strategy;
    c.source = first.clock == "virtual" ? PlanSource::Emulated : PlanSource::Measured;
    const std::vector<size_t> counted = profiler::countedMembers(g, runs);
    for (size_t i : counted) c.run_ids.push_back(runs[i].row.id);
    const profiler::GroupStatistic& s =
        options.with_pretraining && g.with_pretraining ? *g.with_pretraining : g.time;
    c.runs = s.runs;
    c.reached = s.reached;
    c.pending = g.pending;
    c.seconds = s.seconds;
    c.cost = s.cost;
    if (!c.seconds) c.why = whyNot(s, g.pending, counted, runs);
    return c;
}

PlanCandidate projected(const PointEstimate& p, const std::vector<RunTta>& runs, const std::vector<SeedGroup>& groups,
                        std::map<size_t, std::string>& numericsOfRun) {
    PlanCandidate c;
    c.label = p.name;
    c.devices = p.devices;
    c.strategy = p.strategy;
    c.source = PlanSource::Projected;
    if (!p.device_step_seconds) {
        c.why = p.problem;
        return c;
    }
    // Every counted run with the point's numerics, whatever its devices: their steps to target.
    std::vector<profiler::RunOutcome> steps;
    std::vector<size_t> sources;
    for (const SeedGroup& g : groups)
        for (size_t i : profiler::countedMembers(g, runs)) {
            auto it = numericsOfRun.find(i);
            if (it == numericsOfRun.end())
                it = numericsOfRun.emplace(i, profiler::numericsKey(runs[i].row.config_json, runs[i].row.global_batch)).first;
            if (it->second != p.numerics_key) continue;
            sources.push_back(i);
            const auto& step = runs[i].tta.step;
            steps.push_back({step ? std::optional<double>(static_cast<double>(*step)) : std::nullopt, std::nullopt});
        }
    std::sort(sources.begin(), sources.end(), [&](size_t a, size_t b) { return runs[a].row.id.value < runs[b].row.id.value; });
    for (size_t i : sources) c.run_ids.push_back(runs[i].row.id);
    if (sources.empty()) {
        c.why = "no run with the same model, data, optimizer and global batch to take the steps to target from";
        return c;
    }
    const profiler::GroupStatistic s = profiler::groupStatistic(steps);
    c.runs = s.runs;
    c.reached = s.reached;
    if (!s.seconds) {
        c.why = "the " + runsWord(s.runs) + " with the same numerics " +
                (s.reached == 0 ? std::string("never reached the target") : "did not all reach the target (" +
                                                                                 std::to_string(s.reached) + " did)");
        return c;
    }
    c.steps = std::llround(*s.seconds);
    if (p.run_steps && *s.seconds > static_cast<double>(*p.run_steps)) {
        c.why = "needs about " + std::to_string(*c.steps) + " steps to the target; the point trains " +
                std::to_string(*p.run_steps);
        return c;
    }
    // The host's infeed, as the emulated runs were charged it: pinned by the point, else what the
    // emulated runs it came from measured (their data and global batch are the point's).
    double infeed = 0.0;
    std::string infeedFrom = "device.infeed_seconds_per_batch";
    if (p.infeed_seconds) {
        infeed = *p.infeed_seconds;
    } else {
        std::vector<profiler::RunId> measured;
        for (size_t i : sources)
            if (runs[i].infeed_seconds) {
                infeed += *runs[i].infeed_seconds;
                measured.push_back(runs[i].row.id);
            }
        if (!measured.empty()) infeed /= static_cast<double>(measured.size());
        infeedFrom = measured.empty() ? "none measured: no emulated run among them" : "measured by " + idsText(measured);
    }
    c.step_seconds = p.stepSeconds(infeed);
    c.seconds = *s.seconds * *c.step_seconds;
    if (p.price_per_second) c.cost = *c.seconds * *p.price_per_second;
    c.note = std::to_string(*c.steps) + " steps (from " + idsText(c.run_ids) + ") x " +
             profiler::formatDuration(*c.step_seconds) + " a step (devices " +
             profiler::formatDuration(*p.device_step_seconds) + ", host infeed " + profiler::formatDuration(infeed) +
             (p.infeed_prefetch ? " overlapped, " : " not overlapped, ") + infeedFrom + ")";
    return c;
}

}  // namespace

std::vector<PlanCandidate> groupCandidates(const std::vector<RunTta>& runs, const std::vector<SeedGroup>& groups,
                                           CandidateOptions options) {
    std::vector<PlanCandidate> out;
    for (const SeedGroup& g : groups) out.push_back(fromGroup(g, runs, options));
    return out;
}

std::vector<PlanCandidate> sweepCandidates(const std::vector<PointEstimate>& points, const std::vector<RunTta>& runs,
                                           const std::vector<SeedGroup>& groups, CandidateOptions options) {
    std::vector<PlanCandidate> out;
    std::map<size_t, std::string> numericsOfRun;
    for (const PointEstimate& p : points) {
        auto g = std::find_if(groups.begin(), groups.end(), [&](const SeedGroup& x) { return x.key == p.seed_key; });
        if (g != groups.end() && !g->members.empty()) {
            PlanCandidate c = fromGroup(*g, runs, options);
            c.label = p.name;
            out.push_back(std::move(c));
        } else {
            out.push_back(projected(p, runs, groups, numericsOfRun));
        }
    }
    return out;
}

}  // namespace trainbench::app
