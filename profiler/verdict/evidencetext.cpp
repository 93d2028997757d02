// Number formatting for evidence sentences (see evidencetext.h).
#include "profiler/verdict/evidencetext.h"

#include <cstdio>
#include <utility>

namespace trainbench::profiler::text {

std::string fixed(double value, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, value);
    return buf;
}

std::string percent(double fraction) { return fixed(fraction * 100.0, 1); }

std::string megabytes(double bytes) { return fixed(bytes / 1e6, 1); }

Evidence percentEvidence(std::string name, double fraction, std::string sentence) {
    return Evidence{std::move(name), fraction * 100.0, "%", std::move(sentence)};
}

}  // namespace trainbench::profiler::text
