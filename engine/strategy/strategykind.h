#pragma once
// The distribution strategies by kind: what an experiment's `strategy.type` names. Parsed once where
// text comes in (the experiment file, a stored run's attributes); everything past that edge switches
// on the enum, so a misspelt kind is an error at the edge rather than a branch silently not taken.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::engine {

enum class StrategyKind { Single, Mirrored, MultiWorker, ParameterServer, TpuPod, Pipeline, Tensor };

inline constexpr std::array<StrategyKind, 7> kStrategyKinds = {
    StrategyKind::Single, StrategyKind::Mirrored, StrategyKind::MultiWorker,
    StrategyKind::ParameterServer, StrategyKind::TpuPod, StrategyKind::Pipeline, StrategyKind::Tensor};

// The name experiment files and the run store use: "single", "mirrored", "multi_worker",
// "parameter_server", "tpu_pod", "pipeline", "tensor".
std::string_view strategyKindName(StrategyKind kind);
// Every kind's name, in kStrategyKinds order (the choices of strategy.type).
std::vector<std::string> strategyKindNames();
// The kind a name stands for; nullopt for anything else (the caller says where the text came from).
std::optional<StrategyKind> parseStrategyKind(std::string_view name);
// Strategies whose workers are separate processes (a job of tasks, restarts, timeouts).
bool isMultiProcess(StrategyKind kind);

}  // namespace trainbench::engine
