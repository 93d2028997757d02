#include "profiler/report/reportformat.h"

#include <cmath>
#include <cstdio>

namespace trainbench::profiler {

std::string runLabel(const RunRow& run) { return "#" + std::to_string(run.id.value) + " " + run.name; }

std::string fmtTime(const std::string& iso) {
    // "2024-05-01T12:34:56.789Z" -> "2024-05-01 12:34:56 UTC"; anything else as it is.
    if (iso.size() >= 19 && iso[10] == 'T') return iso.substr(0, 10) + " " + iso.substr(11, 8) + " UTC";
    return iso;
}

}  // namespace trainbench::profiler
