#include "profiler/plan/quantities.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace trainbench::profiler {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& text, const std::string& why, const char* example) {
    throw std::invalid_argument(what + " '" + text + "': " + why + "; expected " + example);
}

constexpr const char* kDurationExample = "a duration such as 90s, 45m, 2h, 1h30m or 1.5d";
constexpr const char* kMoneyExample = "an amount in US dollars such as 5, $5 or 12.50";

// A non-negative decimal number at text[at...]; advances at.
double number(const std::string& text, size_t& at, const std::string& what, const char* example) {
    const char* begin = text.data() + at;
    const char* end = text.data() + text.size();
    const char* stop = begin;
    while (stop < end && (std::isdigit(static_cast<unsigned char>(*stop)) || *stop == '.')) ++stop;
    double v = 0.0;
    const auto [ptr, ec] = std::from_chars(begin, stop, v);
    if (begin == stop || ec != std::errc() || ptr != stop)
        fail(what, text, "no number at character " + std::to_string(at + 1), example);
    at = static_cast<size_t>(stop - text.data());
    return v;
}

}  // namespace

double parseDuration(const std::string& text, const std::string& what) {
    if (text.empty()) fail(what, text, "empty", kDurationExample);
    size_t at = 0;
    double total = 0.0;
    int lastRank = 6;  // units must come largest first, each once
    while (at < text.size()) {
        const double v = number(text, at, what, kDurationExample);
        if (at == text.size()) {
            if (lastRank != 6) fail(what, text, "a number without a unit at the end", kDurationExample);
            total += v;  // a bare number: seconds
            break;
        }
        const char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(text[at])));
        const bool millis = unit == 'm' && at + 1 < text.size() && std::tolower(static_cast<unsigned char>(text[at + 1])) == 's';
        const int rank = millis ? 1 : unit == 'd' ? 5 : unit == 'h' ? 4 : unit == 'm' ? 3 : unit == 's' ? 2 : 0;
        if (rank == 0)
            fail(what, text, std::string("unknown unit '") + text[at] + "' at character " + std::to_string(at + 1) +
                                 " (ms, s, m, h or d)", kDurationExample);
        if (rank >= lastRank) fail(what, text, "units must come largest first, each once", kDurationExample);
        lastRank = rank;
        static constexpr double kSeconds[] = {0, 1e-3, 1, 60, 3600, 86400};
        total += v * kSeconds[rank];
        at += millis ? 2 : 1;
    }
    if (!(total > 0.0) || !std::isfinite(total)) fail(what, text, "must be more than 0", kDurationExample);
    return total;
}

double parseMoney(const std::string& text, const std::string& what) {
    std::string t = text;
    auto trim = [&] {
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(0, 1);
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    };
    trim();
    if (t.rfind("USD", 0) == 0) t.erase(0, 3);
    else if (!t.empty() && t.front() == '$') t.erase(0, 1);
    trim();
    if (t.empty()) fail(what, text, "no number", kMoneyExample);
    if (t.front() == '-') fail(what, text, "must not be negative", kMoneyExample);
    size_t at = 0;
    const double v = number(t, at, what, kMoneyExample);
    if (at != t.size()) fail(what, text, "unexpected '" + t.substr(at) + "' after the number", kMoneyExample);
    if (!std::isfinite(v)) fail(what, text, "not a finite number", kMoneyExample);
    return v;
}

}  // namespace trainbench::profiler
