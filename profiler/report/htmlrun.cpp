// One run's section: its charts, verdict, ops, memory, other recorded facts and its experiment.
#include <nlohmann/json.hpp>

#include "profiler/report/htmlparts.h"
#include "profiler/report/reportcharts.h"
#include "profiler/report/reportformat.h"
#include "profiler/store/runattributes.h"

namespace trainbench::profiler::html {

namespace {

// memory.* run attributes a reader knows by these names; others are shown as stored.
const char* memoryLabel(const std::string& key) {
    static const std::pair<const char*, const char*> labels[] = {
        {runattr::kMemoryParamsBytes, "parameters"},
        {runattr::kMemoryGradsBytes, "gradients"},
        {runattr::kMemoryOptimizerBytes, "optimizer state"},
        {runattr::kMemoryActivationBytes, "activations (one batch)"},
        {runattr::kMemoryPeakRssBytes, "peak resident set of the process"},
        {runattr::kMemoryDeviceBytes, "device memory"},
        {runattr::kMemoryDeviceSource, "device memory taken from"},
        {runattr::kMemorySwappedPages, "pages swapped while training"},
        {runattr::kMemoryMajorFaults, "major page faults while training"},
    };
    for (const auto& [k, label] : labels)
        if (key == k) return label;
    return nullptr;
}

bool isNumber(const std::string& value) {
    try {
        size_t used = 0;
        (void)std::stod(value, &used);
        return used == value.size();
    } catch (const std::exception&) {
        return false;
    }
}

std::string attributeValue(const std::string& key, const std::string& value) {
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0) {
        try {
            size_t used = 0;
            const double b = std::stod(value, &used);
            if (used == value.size()) return esc(fmtBytes(b)) + " <span class=\"muted\">(" + esc(value) + " B)</span>";
        } catch (const std::exception&) {
        }
    }
    if (value.find('\n') != std::string::npos) return "<pre class=\"value\">" + esc(value) + "</pre>";
    return esc(value);
}

std::string memorySection(const RunReport& run) {
    std::vector<std::vector<Cell>> rows;
    for (const auto& [key, value] : run.attributes) {
        if (!key.starts_with(runattr::kMemoryGroup)) continue;
        const char* label = memoryLabel(key);
        rows.push_back({text(label ? label : key), {"<code>" + esc(key) + "</code>"}, {attributeValue(key, value), isNumber(value)}});
    }
    std::string h = "<h3>Memory</h3>\n";
    if (rows.empty()) return h + "<p>" + kNotRecorded + ".</p>\n";
    return h + table({"", "attribute", "value"}, rows);
}

std::string configSection(const RunReport& run) {
    const nlohmann::json j = nlohmann::json::parse(run.run.config_json, nullptr, /*allow_exceptions=*/false);
    const std::string pretty = j.is_discarded() ? run.run.config_json : j.dump(2);
    return "<h3>Resolved experiment</h3>\n<pre class=\"config\">" + esc(pretty) + "</pre>\n";
}

}  // namespace

std::string attributesSection(const RunReport& run) {
    std::vector<std::vector<Cell>> rows;
    for (const auto& [key, value] : run.attributes)
        if (!key.starts_with(runattr::kMemoryGroup)) rows.push_back({{"<code>" + esc(key) + "</code>"}, {attributeValue(key, value)}});
    if (rows.empty()) return {};
    return "<h3>Other recorded facts</h3>\n" + table({"attribute", "value"}, rows);
}

std::string runSection(const RunReport& run, bool newPage, const ChartEmbed& embed) {
    const std::string id = std::to_string(run.run.id.value);
    std::string h = "<h2 id=\"run-" + id + "\"" + (newPage ? " class=\"newpage\"" : "") + ">Run " + esc(runLabel(run.run)) + "</h2>\n";
    const std::vector<Chart> list = runCharts(run);
    if (list.empty()) h += "<p>No steps or evaluations recorded: no charts.</p>\n";
    h += charts(list, embed);
    h += verdictSection(run) + opsSection(run) + memorySection(run) + attributesSection(run) + configSection(run);
    return h;
}

}  // namespace trainbench::profiler::html
