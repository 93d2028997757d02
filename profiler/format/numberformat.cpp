#include "profiler/format/numberformat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace trainbench::profiler {

std::string shortestNumber(double v) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string formatDuration(double seconds) {
    char buf[64];
    if (seconds < 1) std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
    else if (seconds < 120) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    else if (seconds < 7200) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
    else if (seconds < 172800) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
    else std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
    return buf;
}

std::string formatMoney(double usd) {
    char buf[64];
    if (usd == 0) std::snprintf(buf, sizeof buf, "$0");
    else if (usd < 0.01) {
        // Two significant digits of a small amount, without an exponent: $0.0042, $0.000013.
        const int decimals = std::min(12, static_cast<int>(std::ceil(-std::log10(usd))) + 1);
        std::snprintf(buf, sizeof buf, "$%.*f", decimals, usd);
    }
    else if (usd < 100) std::snprintf(buf, sizeof buf, "$%.2f", usd);
    else std::snprintf(buf, sizeof buf, "$%.0f", usd);
    return buf;
}

std::string millis(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
    return buf;
}

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

std::string clockTime(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto total = static_cast<long long>(seconds + 0.5);
    char buf[32];
    if (total >= 3600)
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, (total / 60) % 60, total % 60);
    else
        std::snprintf(buf, sizeof buf, "%lld:%02lld", total / 60, total % 60);
    return buf;
}

}  // namespace trainbench::profiler
