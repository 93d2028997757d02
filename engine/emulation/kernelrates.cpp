#include "engine/emulation/kernelrates.h"

#include <algorithm>

namespace trainbench::engine {

const KernelRate& KernelRates::rateFor(const std::string& kind, bool isMatrix) const {
    auto it = kinds.find(kind);
    if (it != kinds.end()) return it->second;
    return isMatrix ? matrix : other;
}

double spillFraction(double cacheBytes, double workingSetBytes, int copies) {
    const double total = workingSetBytes * std::max(1, copies);
    if (!(cacheBytes > 0) || total <= cacheBytes) return 0.0;
    return 1.0 - cacheBytes / total;
}

}  // namespace trainbench::engine
