#include "app/cli/runfilter.h"

#include <CLI/CLI.hpp>

#include "profiler/store/runstatus.h"

namespace trainbench::cli {

std::string RunFilter::problem() const {
    if (!status.empty() && !profiler::parseRunStatus(status))
        return "--status: unknown status '" + status + "' (running, completed, failed, interrupted, stopped)";
    return {};
}

bool RunFilter::matches(const profiler::RunRow& r) const {
    if (!status.empty() && profiler::runStatusName(r.status) != status) return false;
    if (!name.empty() && r.name.find(name) == std::string::npos) return false;
    if (!model.empty() && r.model.value_or("") != model) return false;
    if (!device.empty() && r.device_type.value_or("") != device && r.devices.rfind(device, 0) != 0) return false;
    return true;
}

std::vector<profiler::RunRow> RunFilter::apply(const std::vector<profiler::RunRow>& runs) const {
    std::vector<profiler::RunRow> out;
    for (const profiler::RunRow& r : runs) {
        if (limit > 0 && static_cast<int>(out.size()) >= limit) break;
        if (matches(r)) out.push_back(r);
    }
    return out;
}

void addRunFilterOptions(CLI::App& command, RunFilter& filter) {
    command.add_option("--status", filter.status, "Only runs with this status (running, completed, failed, interrupted, stopped)");
    command.add_option("--name", filter.name, "Only runs whose name contains this");
    command.add_option("--model", filter.model, "Only runs of this model (mlp, cnn, ...)");
    command.add_option("--device", filter.device, "Only runs on this device type (tpu-v3, a100-sxm4-40gb, cpu-host) or devices (cpu:2)");
    command.add_option("-n,--limit", filter.limit, "Only the newest N matching runs")->check(CLI::NonNegativeNumber);
}

}  // namespace trainbench::cli
