// The timeline (see windows.h and rules.h).
#include "profiler/verdict/windows.h"

#include <algorithm>

#include "profiler/verdict/rules.h"
#include "profiler/verdict/stepfindings.h"

namespace trainbench::profiler {

namespace {

struct Window {
    StepTotals totals;
    Finding finding;
};

Finding windowFinding(const StepTotals& t, const RunFacts& facts) {
    std::optional<Finding> overhead;
    if (facts.op_share_of_compute > 0) {
        OpMix mix;  // the window's op time, at the run's share of its compute phases
        mix.op_seconds = mix.op_seconds_per_replica = facts.op_share_of_compute * t.compute();
        overhead = overheadFinding(t, mix, facts.emulated);
    }
    Finding f = decide(t, facts, std::move(overhead)).verdict;
    // The run's findings carry the long evidence (roofline, memory); a window says what changed.
    f.evidence = windowEvidence(t);
    return f;
}

bool sameCall(const Finding& a, const Finding& b) { return a.kind == b.kind && a.severity == b.severity; }

}  // namespace

std::vector<Finding> timeline(const std::vector<StepSample>& steps, const RunFacts& facts) {
    const size_t n = steps.size();
    if (n == 0) return {};
    const size_t count = std::clamp<size_t>(n / static_cast<size_t>(rules::kWindowMinSteps), 1,
                                            static_cast<size_t>(rules::kWindows));
    const size_t base = n / count;
    const size_t extra = n % count;  // the first `extra` windows take one step more

    std::vector<Window> windows;
    size_t begin = 0;
    for (size_t i = 0; i < count; ++i) {
        const size_t end = begin + base + (i < extra ? 1 : 0);
        const StepTotals t = sumSteps(steps, begin, end);
        Finding f = windowFinding(t, facts);
        if (!windows.empty() && sameCall(windows.back().finding, f)) {
            StepTotals merged = windows.back().totals;
            merged.add(t);
            Finding mf = windowFinding(merged, facts);
            // Fractions of a merge lie between the parts', so the call normally holds; if a sum at
            // a threshold tips it, the windows stay apart rather than claim what neither said.
            if (sameCall(mf, f)) {
                windows.back() = {merged, std::move(mf)};
                begin = end;
                continue;
            }
        }
        windows.push_back({t, std::move(f)});
        begin = end;
    }
    std::vector<Finding> out;
    out.reserve(windows.size());
    for (Window& w : windows) out.push_back(std::move(w.finding));
    return out;
}

}  // namespace trainbench::profiler
