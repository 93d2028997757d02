#pragma once
// Why training ended (RunSummary::stop_reason, runs.stop_reason). The trainer sets the enum; its
// name is the text the run store holds, and the store's reader parses it back, so no one past those
// two edges compares strings.
#include <array>
#include <optional>
#include <string_view>

namespace trainbench::engine {

enum class StopReason {
    Epochs,          // train.epochs passes over the training set
    MaxSteps,        // train.max_steps
    TargetAccuracy,  // train.stop_at_target and the target reached
    Stopped,         // stopped by the user (Ctrl-C, the GUI's stop button)
};

inline constexpr std::array<StopReason, 4> kStopReasons = {StopReason::Epochs, StopReason::MaxSteps,
                                                           StopReason::TargetAccuracy, StopReason::Stopped};

// The stored text: "epochs", "max_steps", "target_accuracy", "stopped".
std::string_view stopReasonName(StopReason reason);
// The reason a text stands for; nullopt for anything else (the caller says where the text came from).
std::optional<StopReason> parseStopReason(std::string_view name);

}  // namespace trainbench::engine
