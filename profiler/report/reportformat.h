#pragma once
// How the report writes names and times (its numbers: profiler/format/numberformat.h).
#include <optional>
#include <string>

#include "profiler/store/runrow.h"

namespace trainbench::profiler {

inline constexpr const char* kNotRecorded = "not recorded";

std::string runLabel(const RunRow& run);                  // "#3 fmnist-mlp"
std::string fmtTime(const std::string& iso);               // "2024-05-01 12:34:56 UTC"

}  // namespace trainbench::profiler
