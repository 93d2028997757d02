#include "engine/strategy/strategykind.h"

namespace trainbench::engine {

std::string_view strategyKindName(StrategyKind kind) {
    switch (kind) {
        case StrategyKind::Single: return "single";
        case StrategyKind::Mirrored: return "mirrored";
        case StrategyKind::MultiWorker: return "multi_worker";
        case StrategyKind::ParameterServer: return "parameter_server";
        case StrategyKind::TpuPod: return "tpu_pod";
        case StrategyKind::Pipeline: return "pipeline";
        case StrategyKind::Tensor: return "tensor";
    }
    return "?";
}

std::vector<std::string> strategyKindNames() {
    std::vector<std::string> names;
    for (StrategyKind kind : kStrategyKinds) names.emplace_back(strategyKindName(kind));
    return names;
}

std::optional<StrategyKind> parseStrategyKind(std::string_view name) {
    for (StrategyKind kind : kStrategyKinds)
        if (strategyKindName(kind) == name) return kind;
    return std::nullopt;
}

bool isMultiProcess(StrategyKind kind) {
    return kind == StrategyKind::MultiWorker || kind == StrategyKind::ParameterServer;
}

}  // namespace trainbench::engine
