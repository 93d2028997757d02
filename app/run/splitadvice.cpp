#include "app/run/splitadvice.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "app/run/emulatedrun.h"
#include "profiler/format/numberformat.h"

namespace trainbench::app {

namespace {

// Four micro-batches per stage but no more than the batch has examples, preferring a count between K
// and 4K that divides the batch.
int microBatchesFor(int stages, int64_t batch) {
    const int64_t most = std::min<int64_t>(batch, 4 * static_cast<int64_t>(stages));
    for (int64_t m = most; m >= stages; --m)
        if (batch % m == 0) return static_cast<int>(m);
    return static_cast<int>(std::max<int64_t>(1, most));
}

// The fullest stage's GPU with the model cut into `stages`, or nothing when the model cannot be cut
// so (fewer layers than stages, a batch smaller than the micro-batches).
std::optional<MemorySplit> trySplit(const Experiment& x, int64_t globalBatch, const engine::Dims& shape,
                                    int64_t classes, int stages, bool recompute) {
    Experiment split = x;
    const bool pipeline = x.strategy.type == engine::StrategyKind::Pipeline;
    split.strategy.type = engine::StrategyKind::Pipeline;
    split.strategy.stages = stages;
    split.strategy.micro_batches = pipeline ? x.strategy.micro_batches : microBatchesFor(stages, globalBatch);
    split.strategy.recompute = recompute;
    if (!pipeline || stages != x.strategy.stages) split.strategy.stage_boundaries.clear();  // balanced
    try {
        const DevicePlan plan = planDevices(split);
        MemorySplit s{stages, split.strategy.micro_batches, recompute,
                      memoryOnDevice(split, plan, globalBatch, shape, classes)};
        return s;
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
}

bool fitsWithRoom(const MemorySplit& s) { return s.memory.fits && !s.memory.near_capacity; }

}  // namespace

std::vector<MemorySplit> pipelineSplitsThatFit(const Experiment& x, const DevicePlan& plan, int64_t globalBatch,
                                               const engine::Dims& shape, int64_t classes) {
    const bool pipeline = x.strategy.type == engine::StrategyKind::Pipeline;
    if (!plan.emulated || plan.spec.kind != engine::DeviceKind::Gpu || plan.replicas != 1) return {};
    if (!pipeline && x.strategy.type != engine::StrategyKind::Single) return {};
    std::vector<MemorySplit> out;
    // The fewest stages that fit, from `from` on.
    auto fewest = [&](int from, bool recompute) -> std::optional<MemorySplit> {
        for (int k = from; k <= kMaxSplitStages; ++k) {
            const std::optional<MemorySplit> s = trySplit(x, globalBatch, shape, classes, k, recompute);
            if (!s) return std::nullopt;  // the model has no more layers to cut (or the batch examples)
            if (fitsWithRoom(*s)) return s;
        }
        return std::nullopt;
    };
    const int current = pipeline ? x.strategy.stages : 1;
    const std::optional<MemorySplit> plain = pipeline && x.strategy.recompute ? std::nullopt : fewest(current + 1, false);
    const std::optional<MemorySplit> recomputed = fewest(pipeline ? current : 2, true);
    if (plain) out.push_back(*plain);
    // Recomputation runs every forward twice: worth proposing when it saves GPUs.
    if (recomputed && (!plain || recomputed->stages < plain->stages)) out.push_back(*recomputed);
    return out;
}

std::vector<std::string> splitSettings(const MemorySplit& split) {
    std::vector<std::string> s{"strategy.type=pipeline", "strategy.stages=" + std::to_string(split.stages),
                               "strategy.micro_batches=" + std::to_string(split.micro_batches)};
    if (split.recompute) s.push_back("strategy.recompute=true");
    return s;
}

std::string describeSplit(const MemorySplit& split) {
    std::string settings;
    for (const std::string& s : splitSettings(split)) settings += (settings.empty() ? "" : ", ") + s;
    const engine::MemoryCheck& m = split.memory;
    return std::to_string(split.stages) + " stages (" + settings + "): " + profiler::fmtBytes(m.needed_bytes) + " of " +
           profiler::fmtBytes(m.capacity_bytes) + " on the fullest GPU (" + profiler::fmtPercent(m.fraction, 0) +
           "; activations " + profiler::fmtBytes(m.activation_bytes) + ")";
}

std::string splitAdvice(const std::vector<MemorySplit>& splits) {
    if (splits.empty()) return "";
    std::string out = "; as a pipeline across GPUs: ";
    for (size_t i = 0; i < splits.size(); ++i) out += (i ? ", or " : "") + describeSplit(splits[i]);
    return out;
}

nlohmann::json splitsJson(const std::vector<MemorySplit>& splits) {
    nlohmann::json out = nlohmann::json::array();
    for (const MemorySplit& s : splits)
        out.push_back({{"stages", s.stages},
                       {"micro_batches", s.micro_batches},
                       {"recompute", s.recompute},
                       {"needed_bytes", s.memory.needed_bytes},
                       {"capacity_bytes", s.memory.capacity_bytes},
                       {"params_bytes", s.memory.params_bytes},
                       {"grads_bytes", s.memory.grads_bytes},
                       {"optimizer_bytes", s.memory.optimizer_bytes},
                       {"activation_bytes", s.memory.activation_bytes}});
    return out;
}

}  // namespace trainbench::app
