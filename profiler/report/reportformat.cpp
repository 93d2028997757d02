#include "profiler/report/reportformat.h"

#include <cmath>
#include <cstdio>

namespace trainbench::profiler {

std::string runLabel(const RunRow& run) { return "#" + std::to_string(run.id.value) + " " + run.name; }

std::string fmtFixed(double v, int decimals) {
    if (std::isnan(v)) return "NaN";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string fmtPercent(double fraction, int decimals) { return fmtFixed(100.0 * fraction, decimals) + " %"; }

std::string fmtSeconds(double seconds) {
    if (!std::isfinite(seconds)) return fmtFixed(seconds, 0);
    std::string s = fmtFixed(seconds, seconds < 10 ? 2 : 1) + " s";
    if (seconds >= 60) {
        const long long total = std::llround(seconds);
        char buf[48];
        if (total >= 3600)
            std::snprintf(buf, sizeof buf, " (%lld:%02lld:%02lld)", total / 3600, total / 60 % 60, total % 60);
        else
            std::snprintf(buf, sizeof buf, " (%lld:%02lld)", total / 60, total % 60);
        s += buf;
    }
    return s;
}

std::string fmtMs(double seconds) { return fmtFixed(1e3 * seconds, 3) + " ms"; }

std::string fmtRate(double perSecond) { return fmtFixed(perSecond, perSecond < 100 ? 1 : 0); }

std::string fmtBytes(double b) {
    if (b >= 1024.0 * 1024 * 1024) return fmtFixed(b / (1024.0 * 1024 * 1024), 2) + " GiB";
    if (b >= 1024.0 * 1024) return fmtFixed(b / (1024.0 * 1024), 1) + " MiB";
    if (b >= 1024.0) return fmtFixed(b / 1024.0, 1) + " KiB";
    return fmtFixed(b, 0) + " B";
}

std::string fmtTime(const std::string& iso) {
    // "2024-05-01T12:34:56.789Z" -> "2024-05-01 12:34:56 UTC"; anything else as it is.
    if (iso.size() >= 19 && iso[10] == 'T') return iso.substr(0, 10) + " " + iso.substr(11, 8) + " UTC";
    return iso;
}

}  // namespace trainbench::profiler
