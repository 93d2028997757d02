// The order of the rules (see rules.h): capacity, then input or communication >= 20 % (the larger
// wins), then input >= 5 %, then a high overhead, then the roofline, else balanced.
#include "profiler/verdict/decide.h"

#include <iterator>

#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/stepfindings.h"

namespace trainbench::profiler {

namespace {

Finding balanced(const StepTotals& t, const RunFacts& facts) {
    Finding f;
    f.kind = BoundKind::Balanced;
    f.severity = Severity::Low;
    if (t.step <= 0) {
        f.summary = "Balanced: no step time was recorded";
        return f;
    }
    f.summary = "Balanced: no bound stands out (input " + text::percent(t.inputFraction()) + " %, communication " +
                text::percent(t.commFraction()) + " % of step time" +
                (facts.roofline ? ")" : "; no roofline: the machine is not calibrated or no op statistics were recorded)");
    f.evidence = windowEvidence(t);
    return f;
}

}  // namespace

Decision decide(const StepTotals& t, const RunFacts& facts, std::optional<Finding> overhead) {
    std::vector<Finding> order;
    if (facts.capacity) order.push_back(*facts.capacity);
    std::optional<Finding> input = inputFinding(t);
    std::optional<Finding> comm = commFinding(t, facts.pipeline, facts.tensorDevices);
    if (input && input->severity == Severity::High) {
        // Both at >= 20 %: the larger is the verdict (input on a tie), the other a further finding.
        if (comm && t.commFraction() > t.inputFraction()) {
            order.push_back(*comm);
            order.push_back(*input);
        } else {
            order.push_back(*input);
            if (comm) order.push_back(*comm);
        }
    } else {
        if (comm) order.push_back(*comm);
        if (input) order.push_back(*input);
    }
    const bool overheadFirst = overhead && overhead->severity == Severity::High;
    if (overheadFirst) order.push_back(*overhead);
    if (facts.roofline) order.push_back(*facts.roofline);
    if (overhead && !overheadFirst) order.push_back(*overhead);

    Decision d;
    if (order.empty()) {
        d.verdict = balanced(t, facts);
    } else {
        d.verdict = std::move(order.front());
        d.further.assign(std::make_move_iterator(order.begin() + 1), std::make_move_iterator(order.end()));
    }
    // Each finding covers these steps, but for one that was measured over its own (the overhead:
    // the whole run, warm-up included).
    auto cover = [&](Finding& f) {
        if (f.first_step > 0) return;
        f.first_step = t.first_step;
        f.last_step = t.last_step;
    };
    cover(d.verdict);
    for (Finding& f : d.further) cover(f);
    return d;
}

}  // namespace trainbench::profiler
