#include "engine/strategy/tpupodstrategy.h"

#include <stdexcept>

namespace trainbench::engine {

std::unique_ptr<Strategy> makeTpuPodStrategy(const StrategySpec& spec) {
    if (!spec.emulated)
        throw std::invalid_argument("tpu_pod runs on an emulated TPU slice only (device.type 'tpu-v2', 'tpu-v3' or "
                                    "'tpu-v4' with strategy.slice)");
    return std::make_unique<SingleStrategy>(spec.replica, spec.replicas);
}

}  // namespace trainbench::engine
