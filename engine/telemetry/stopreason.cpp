#include "engine/telemetry/stopreason.h"

namespace trainbench::engine {

std::string_view stopReasonName(StopReason reason) {
    switch (reason) {
        case StopReason::Epochs: return "epochs";
        case StopReason::MaxSteps: return "max_steps";
        case StopReason::TargetAccuracy: return "target_accuracy";
        case StopReason::Stopped: return "stopped";
    }
    return "?";
}

std::optional<StopReason> parseStopReason(std::string_view name) {
    for (StopReason reason : kStopReasons)
        if (stopReasonName(reason) == name) return reason;
    return std::nullopt;
}

}  // namespace trainbench::engine
