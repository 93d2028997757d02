#include "engine/model/stagepartition.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace trainbench::engine {

std::vector<int> balanceStages(const std::vector<double>& costs, int stages) {
    const int n = static_cast<int>(costs.size());
    if (stages < 1 || n < stages)
        throw std::invalid_argument("cannot cut " + std::to_string(n) + " layer(s) into " + std::to_string(stages) +
                                    " pipeline stage(s): each stage needs at least one layer");
    std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
    for (int i = 0; i < n; ++i) prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + costs[static_cast<size_t>(i)];
    const auto cost = [&](int a, int b) { return prefix[static_cast<size_t>(b)] - prefix[static_cast<size_t>(a)]; };
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // best[s][i]: the least possible largest part when the first i layers make s parts; cut[s][i]
    // where the last of those parts starts.
    std::vector<std::vector<double>> best(static_cast<size_t>(stages) + 1, std::vector<double>(static_cast<size_t>(n) + 1, kInf));
    std::vector<std::vector<int>> cut(static_cast<size_t>(stages) + 1, std::vector<int>(static_cast<size_t>(n) + 1, 0));
    best[0][0] = 0.0;
    for (int s = 1; s <= stages; ++s)
        for (int i = s; i <= n; ++i)
            for (int j = s - 1; j < i; ++j) {
                const double v = std::max(best[static_cast<size_t>(s) - 1][static_cast<size_t>(j)], cost(j, i));
                if (v < best[static_cast<size_t>(s)][static_cast<size_t>(i)]) {
                    best[static_cast<size_t>(s)][static_cast<size_t>(i)] = v;
                    cut[static_cast<size_t>(s)][static_cast<size_t>(i)] = j;
                }
            }
    std::vector<int> starts(static_cast<size_t>(stages));
    for (int s = stages, i = n; s >= 1; --s) {
        starts[static_cast<size_t>(s) - 1] = cut[static_cast<size_t>(s)][static_cast<size_t>(i)];
        i = starts[static_cast<size_t>(s) - 1];
    }
    return starts;
}

double estimatedLayerSeconds(const Layer& layer, int64_t batch) {
    constexpr double kFlops = 50e9, kBytes = 15e9;
    std::vector<OpDesc> ops;
    layer.describeOps(batch, /*training=*/true, ops);
    double seconds = 0.0;
    for (const OpDesc& op : ops)
        seconds += static_cast<double>(op.calls) * std::max(op.cost.flops / kFlops, op.cost.bytes / kBytes);
    return seconds;
}

std::vector<int> stageStarts(const std::vector<std::unique_ptr<Layer>>& layers, int stages,
                             const std::vector<int>& boundaries, int64_t batch) {
    const int n = static_cast<int>(layers.size());
    if (boundaries.empty()) {
        std::vector<double> costs;
        for (const auto& l : layers) costs.push_back(estimatedLayerSeconds(*l, batch));
        return balanceStages(costs, stages);
    }
    if (static_cast<int>(boundaries.size()) != stages - 1)
        throw std::invalid_argument("strategy.stage_boundaries has " + std::to_string(boundaries.size()) +
                                    " entries; " + std::to_string(stages) + " stages need " + std::to_string(stages - 1) +
                                    " (where stages 1.." + std::to_string(stages - 1) + " begin)");
    std::vector<int> starts{0};
    for (size_t i = 0; i < boundaries.size(); ++i) {
        const int b = boundaries[i];
        const std::string where = "strategy.stage_boundaries[" + std::to_string(i) + "]: ";
        if (b <= starts.back())
            throw std::invalid_argument(where + std::to_string(b) + " must be after " + std::to_string(starts.back()) +
                                        " (each stage needs at least one layer)");
        if (b >= n)
            throw std::invalid_argument(where + std::to_string(b) + " is past the model's last layer (" +
                                        std::to_string(n - 1) + ")");
        starts.push_back(b);
    }
    return starts;
}

}  // namespace trainbench::engine
