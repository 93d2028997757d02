#include "engine/device/kernelrates.h"

namespace trainbench::engine {

const KernelRate& KernelRates::rateFor(const std::string& kind, bool isMatrix) const {
    auto it = kinds.find(kind);
    if (it != kinds.end()) return it->second;
    return isMatrix ? matrix : other;
}

}  // namespace trainbench::engine
