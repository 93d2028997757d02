#include "profiler/tta/targetaccuracy.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace trainbench::profiler {

TargetAccuracy TargetAccuracy::fromFraction(double fraction) {
    if (!(fraction > 0.0 && fraction <= 1.0)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", fraction);
        throw std::invalid_argument(std::string("target accuracy ") + buf +
                                    " is outside (0, 1]: give a fraction such as 0.85 (or 85%)");
    }
    return TargetAccuracy(fraction);
}

TargetAccuracy TargetAccuracy::parse(const std::string& text) {
    std::string number = text;
    const bool percent = !number.empty() && number.back() == '%';
    if (percent) number.pop_back();
    double v = 0.0;
    const char* end = number.data() + number.size();
    const auto [ptr, ec] = std::from_chars(number.data(), end, v);
    if (number.empty() || ec != std::errc() || ptr != end || !std::isfinite(v))
        throw std::invalid_argument("target accuracy '" + text + "' is not a number: give a fraction such as 0.85 (or 85%)");
    return fromFraction(percent ? v / 100.0 : v);
}

}  // namespace trainbench::profiler
