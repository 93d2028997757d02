#include "profiler/store/runstatus.h"

#include <array>
#include <utility>

namespace trainbench::profiler {

namespace {

// Kept in one table so the names here and the CHECK constraint in the schema are easy to compare.
constexpr std::array<std::pair<RunStatus, std::string_view>, 5> kNames{{
    {RunStatus::Running, "running"},
    {RunStatus::Completed, "completed"},
    {RunStatus::Failed, "failed"},
    {RunStatus::Interrupted, "interrupted"},
    {RunStatus::Stopped, "stopped"},
}};

}  // namespace

std::string_view runStatusName(RunStatus status) {
    for (const auto& [value, name] : kNames) {
        if (value == status) return name;
    }
    return "failed";  // unreachable for valid enum values
}

std::optional<RunStatus> parseRunStatus(std::string_view text) {
    for (const auto& [value, name] : kNames) {
        if (name == text) return value;
    }
    return std::nullopt;
}

}  // namespace trainbench::profiler
