#pragma once
// A test accuracy to reach, as a fraction in (0, 1]: the target of time- and cost-to-accuracy. Made
// only through fromFraction or parse, so a value outside the range never gets into a computation.
#include <string>

namespace trainbench::profiler {

class TargetAccuracy {
public:
    // Throws std::invalid_argument naming the value when it is not in (0, 1] (NaN included).
    static TargetAccuracy fromFraction(double fraction);
    // "0.85", or a percentage "85%". Throws std::invalid_argument saying what was expected.
    static TargetAccuracy parse(const std::string& text);

    double fraction() const { return fraction_; }
    // An evaluation reaches the target when its accuracy is at least the target.
    bool reachedBy(double accuracy) const { return accuracy >= fraction_; }

private:
    explicit TargetAccuracy(double fraction) : fraction_(fraction) {}
    double fraction_;
};

}  // namespace trainbench::profiler
