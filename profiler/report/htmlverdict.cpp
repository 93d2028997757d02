// What bounds a run: the stored verdict with its evidence, further findings, the timeline and the
// ranked actions; then the ops that took the time, against the machine's roofline.
#include <algorithm>

#include "profiler/report/htmlparts.h"
#include "profiler/report/reportformat.h"
#include "profiler/store/runattributes.h"

namespace trainbench::profiler::html {

namespace {

constexpr size_t kTopOps = 12;

// Op kinds are long snake_case words; a zero-width space after each '_' lets a narrow column wrap
// there instead of in mid-word.
std::string breakable(const std::string& kind) {
    std::string out;
    for (char c : kind) {
        out += c;
        if (c == '_') out += "\u200B";
    }
    return out;
}

std::string steps(const Finding& f) {
    if (f.first_step == 0 && f.last_step == 0) return {};
    return "steps " + std::to_string(f.first_step) + "\u2013" + std::to_string(f.last_step);
}

std::string finding(const Finding& f, const char* tag) {
    std::string h = "<p class=\"finding\"><" + std::string(tag) + " class=\"sev-" + severityName(f.severity) + "\">" +
                    esc(verdictLabel(f.kind, f.severity)) + "</" + tag + ">";
    if (!steps(f).empty()) h += " <span class=\"muted\">(" + esc(steps(f)) + ")</span>";
    h += "<br/>" + esc(f.summary) + "</p>\n";
    if (!f.evidence.empty()) {
        h += "<ul class=\"evidence\">\n";
        for (const Evidence& e : f.evidence) h += "<li>" + esc(e.text) + "</li>\n";
        h += "</ul>\n";
    }
    return h;
}

std::string changeText(const Change& c) {
    return c.key + ": " + (c.from.is_null() ? std::string("(unset)") : c.from.dump()) + " \u2192 " + c.to.dump();
}

std::string actions(const std::vector<Action>& list, const RunRow& run) {
    if (list.empty()) return "<p>No actions recorded.</p>\n";
    std::string h = "<h4>Actions, best first</h4>\n<p class=\"muted\">Each is a change to the experiment: "
                    "<code>trainbench-cli apply " + std::to_string(run.id.value) +
                    " --action N</code> writes it, <code>--run</code> runs it.</p>\n<ol class=\"actions\">\n";
    for (const Action& a : list) {
        h += "<li><b>" + esc(a.title) + "</b> <span class=\"muted\">(addresses " + esc(boundKindName(a.addresses)) + ")</span>";
        if (a.changes.empty()) h += "<br/>No change to the experiment file: hardware or the model's design.";
        for (const Change& c : a.changes) h += "<br/><code>" + esc(changeText(c)) + "</code>";
        if (!a.expected.empty()) h += "<br/>Expected: " + esc(a.expected);
        if (a.expected_speedup) h += " (throughput \u00D7" + fmtFixed(*a.expected_speedup, 2) + ")";
        if (!a.rationale.empty()) h += "<br/><span class=\"muted\">Why: " + esc(a.rationale) + "</span>";
        h += "</li>\n";
    }
    return h + "</ol>\n";
}

}  // namespace

std::string verdictSection(const RunReport& run) {
    std::string h = "<h3>Verdict</h3>\n";
    if (!run.verdict)
        return h + "<p>Not recorded: the run was never classified (<code>trainbench-cli profile " +
               std::to_string(run.run.id.value) + "</code> classifies it and stores the verdict).</p>\n";
    const Verdict& v = *run.verdict;
    h += finding(v.verdict, "b");
    if (!v.findings.empty()) {
        h += "<h4>Further findings</h4>\n";
        for (const Finding& f : v.findings) h += finding(f, "b");
    }
    if (!v.windows.empty()) {
        std::vector<std::vector<Cell>> rows;
        for (const Finding& w : v.windows)
            rows.push_back({text(steps(w)), {"<span class=\"sev-" + std::string(severityName(w.severity)) + "\">" +
                                             esc(verdictLabel(w.kind, w.severity)) + "</span>"},
                            text(w.summary)});
        h += "<h4>Timeline</h4>\n" + table({"steps", "bound", "summary"}, rows);
    }
    return h + actions(v.actions, run.run);
}

std::string opsSection(const RunReport& run) {
    std::string h = "<h3>Top ops by time</h3>\n";
    if (run.ops.empty()) return h + "<p>" + kNotRecorded + ".</p>\n";
    double total = 0;
    for (const auto& o : run.ops) total += o.seconds;
    // The steps they cover: after the warm-up, as the step breakdown (runs recorded before the
    // attribute counted every step, and say nothing here).
    for (const auto& [key, value] : run.attributes)
        if (key == runattr::kOpsFirstStep && !run.steps.empty())
            h += "<p>Steps " + esc(value) + "–" + std::to_string(run.steps.back().step) + ": the warm-up before step " +
                 esc(value) + " is left out, as in the step breakdown.</p>\n";
    const auto& roofs = run.roofs;
    if (roofs)
        h += "<p>Roofline of " + esc(roofs->host) + " at " + std::to_string(roofs->threads) + " thread(s): " +
             fmtFixed(roofs->peak_gflops, 1) + " GFLOP/s peak, " + fmtFixed(roofs->bandwidth_gbs, 1) +
             " GB/s memory bandwidth, ridge at " + fmtFixed(roofs->ridge(), 2) + " FLOP/B (measured " +
             esc(fmtTime(roofs->measured_at)) + ").</p>\n";
    else
        h += "<p>The machine's roofs are not recorded: no roofline.</p>\n";
    std::vector<std::vector<Cell>> rows;
    for (size_t i = 0; i < run.ops.size() && i < kTopOps; ++i) {
        const auto& o = run.ops[i];
        std::string side = kNotRecorded;
        if (roofs && o.flops > 0 && o.seconds > 0) {
            const double roof = std::min(roofs->peak_gflops, o.intensity() * roofs->bandwidth_gbs);
            side = std::string(o.intensity() < roofs->ridge() ? "memory" : "compute") + ", " +
                   fmtFixed(roof > 0 ? 100 * o.gflops() / roof : 0.0, 0) + " % of roof";
        } else if (roofs && o.bytes > 0 && o.seconds > 0) {
            side = "memory, " + fmtFixed(100 * o.gbytesPerSecond() / roofs->bandwidth_gbs, 0) + " % of roof";
        }
        rows.push_back({{"<code>" + esc(breakable(o.kind)) + "</code>"}, text(o.shape), number(std::to_string(o.calls)),
                        number(fmtFixed(o.seconds, 3) + " s"), number(fmtPercent(total > 0 ? o.seconds / total : 0.0, 1)),
                        number(fmtFixed(o.calls > 0 ? 1e3 * o.seconds / static_cast<double>(o.calls) : 0.0, 3)),
                        number(fmtFixed(o.gflops(), 1)), number(fmtFixed(o.gbytesPerSecond(), 1)),
                        number(fmtFixed(o.intensity(), 2)), text(side)});
    }
    h += table({"op", "shape", "calls", "time", "share", "ms/call", "GFLOP/s", "GB/s", "FLOP/B", "roofline"}, rows, "grid ops");
    if (run.ops.size() > kTopOps) {
        double rest = 0;
        for (size_t i = kTopOps; i < run.ops.size(); ++i) rest += run.ops[i].seconds;
        h += "<p class=\"muted\">" + std::to_string(run.ops.size() - kTopOps) + " more ops (" +
             fmtPercent(total > 0 ? rest / total : 0.0, 1) + " of op time) not shown.</p>\n";
    }
    return h;
}

}  // namespace trainbench::profiler::html
