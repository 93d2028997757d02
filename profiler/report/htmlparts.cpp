// The report's page skeleton: header, the runs side by side, then comparison and one section per run.
#include "profiler/report/htmlparts.h"

#include "profiler/format/numberformat.h"
#include "profiler/report/reportformat.h"
#include "profiler/report/svgcanvas.h"
#include "profiler/store/runstatus.h"

namespace trainbench::profiler::html {

namespace {

std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : kNotRecorded; }
std::string optPercent(const std::optional<double>& v) { return v ? fmtPercent(*v) : kNotRecorded; }
std::string optSeconds(const std::optional<double>& v) { return v ? fmtSeconds(*v) : kNotRecorded; }
std::string optText(const std::optional<std::string>& v) { return v && !v->empty() ? *v : kNotRecorded; }

bool summarised(const RunRow& r) { return r.train_seconds.has_value(); }

std::string timeToTarget(const RunRow& r) {
    if (r.time_to_target) {
        std::string s = fmtSeconds(*r.time_to_target);
        if (r.step_at_target) s += ", step " + std::to_string(*r.step_at_target);
        if (r.target_accuracy) s += " (target " + fmtPercent(*r.target_accuracy) + ")";
        return s;
    }
    if (!r.target_accuracy) return "no target set";
    if (!summarised(r)) return kNotRecorded;
    return "target " + fmtPercent(*r.target_accuracy) + " not reached";
}

std::string statusCell(const RunRow& r) {
    std::string s = "<span class=\"status-" + std::string(runStatusName(r.status)) + "\">" +
                    std::string(runStatusName(r.status)) + "</span>";
    if (r.message && !r.message->empty()) s += "<br/><span class=\"muted\">" + esc(*r.message) + "</span>";
    return s;
}

}  // namespace

std::string esc(const std::string& t) { return xmlEscape(t); }

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows, const std::string& cls) {
    std::string h = "<table class=\"" + cls + "\" cellspacing=\"0\" cellpadding=\"3\">\n<thead><tr>";
    for (const std::string& col : header) h += "<th>" + esc(col) + "</th>";
    h += "</tr></thead>\n<tbody>\n";
    for (const auto& row : rows) {
        h += "<tr>";
        for (const Cell& c : row) h += c.number ? "<td class=\"num\" align=\"right\">" + c.html + "</td>" : "<td>" + c.html + "</td>";
        h += "</tr>\n";
    }
    return h + "</tbody></table>\n";
}

std::string charts(const std::vector<Chart>& list, const ChartEmbed& embed) {
    if (list.empty()) return {};
    std::string h = "<div class=\"charts\">\n";
    for (const Chart& c : list) h += embed(c);
    return h + "</div>\n";
}

std::string header(const ReportData& data) {
    std::string title = data.runs.size() == 1 ? runLabel(data.runs.front().run) : std::to_string(data.runs.size()) + " runs";
    std::string h = "<h1>trainbench report: " + esc(title) + "</h1>\n<p class=\"meta\">Run store <code>" +
                    esc(data.storePath) + "</code>, read " + esc(fmtTime(data.generatedAt)) +
                    ". Everything below is what the store recorded; a value it does not hold reads "
                    "\u201Cnot recorded\u201D.</p>\n";
    if (data.runs.size() > 1) {
        h += "<p class=\"toc\">Sections: <a href=\"#runs\">runs</a> \u00B7 <a href=\"#comparison\">comparison</a>";
        for (const RunReport& r : data.runs)
            h += " \u00B7 <a href=\"#run-" + std::to_string(r.run.id.value) + "\">" + esc(runLabel(r.run)) + "</a>";
        h += "</p>\n";
    }
    return h;
}

std::string overview(const ReportData& data) {
    std::vector<std::string> head{""};
    for (const RunReport& r : data.runs) head.push_back(runLabel(r.run));
    struct Field {
        const char* name;
        std::function<Cell(const RunRow&)> value;
    };
    const std::vector<Field> fields{
        {"name", [](const RunRow& r) { return text(r.name); }},
        {"id", [](const RunRow& r) { return number(std::to_string(r.id.value)); }},
        {"status", [](const RunRow& r) { return Cell{statusCell(r)}; }},
        {"strategy", [](const RunRow& r) { return text(r.strategy); }},
        {"devices", [](const RunRow& r) { return text(r.devices); }},
        {"replicas", [](const RunRow& r) { return number(opt(r.replicas)); }},
        {"global batch", [](const RunRow& r) { return number(opt(r.global_batch)); }},
        {"dataset", [](const RunRow& r) { return text(optText(r.dataset)); }},
        {"model", [](const RunRow& r) { return text(optText(r.model)); }},
        {"host", [](const RunRow& r) { return text(r.host); }},
        {"started", [](const RunRow& r) { return text(fmtTime(r.started_at)); }},
        {"ended", [](const RunRow& r) { return text(r.ended_at ? fmtTime(*r.ended_at) : kNotRecorded); }},
        {"steps", [](const RunRow& r) { return number(opt(r.steps)); }},
        {"epochs completed", [](const RunRow& r) { return number(opt(r.epochs)); }},
        {"stop reason", [](const RunRow& r) { return text(optText(r.stop_reason)); }},
        {"final training loss", [](const RunRow& r) { return number(r.final_loss ? fmtFixed(*r.final_loss, 4) : kNotRecorded); }},
        {"final accuracy", [](const RunRow& r) { return number(optPercent(r.final_accuracy)); }},
        {"best accuracy", [](const RunRow& r) { return number(optPercent(r.best_accuracy)); }},
        {"time to target", [](const RunRow& r) { return text(timeToTarget(r)); }},
        {"throughput (samples/s)", [](const RunRow& r) { return number(r.throughput ? fmtRate(*r.throughput) : kNotRecorded); }},
        {"training time", [](const RunRow& r) { return number(optSeconds(r.train_seconds)); }},
        {"evaluation time", [](const RunRow& r) { return number(optSeconds(r.eval_seconds)); }},
        {"clock", [](const RunRow& r) {
             return text(r.clock == "virtual" ? "virtual (" + optText(r.device_type) + "; this host took " +
                                                    optSeconds(r.host_seconds) + ")"
                                              : "wall");
         }},
        {"cost", [](const RunRow& r) { return number(r.cost ? formatMoney(*r.cost) : kNotRecorded); }},
        {"warm start from run", [](const RunRow& r) {
             return r.warm_start_run ? number(opt(r.warm_start_run)) : text("none (trained from scratch)");
         }},
        {"verdict", [](const RunRow& r) { return text(optText(r.verdict)); }},
        {"experiment file", [](const RunRow& r) { return text(optText(r.experiment_file)); }},
    };
    std::vector<std::vector<Cell>> rows;
    for (const Field& f : fields) {
        std::vector<Cell> row{{"<b>" + esc(f.name) + "</b>"}};
        // One column per run mixes numbers and text: all left-aligned reads best.
        for (const RunReport& r : data.runs) row.push_back({f.value(r.run).html, false});
        rows.push_back(std::move(row));
    }
    return "<h2 id=\"runs\">" + std::string(data.runs.size() == 1 ? "Summary" : "Runs") + "</h2>\n" + table(head, rows, "grid overview");
}

std::string body(const ReportData& data, const ChartEmbed& embed) {
    std::string h = header(data) + overview(data) + comparison(data, embed);
    for (size_t i = 0; i < data.runs.size(); ++i) h += runSection(data.runs[i], data.runs.size() > 1, embed);
    return h;
}

}  // namespace trainbench::profiler::html
