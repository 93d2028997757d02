#include "engine/strategy/parametershard.h"

#include <algorithm>
#include <string>

#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

std::string joinNames(const std::vector<std::string>& names) {
    if (names.empty()) return "none";
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

ParameterShard::ParameterShard(const OptimizerConfig& optimizer, uint32_t serverIndex)
    : config_(optimizer), index_(serverIndex) {}

void ParameterShard::init(ps::Init init) {
    if (initialized())
        throw ProtocolError("Init message: parameter server " + std::to_string(index_) +
                            " holds its shard already (a second Init would reset the version workers pull)");
    if (init.server != index_)
        throw ProtocolError("Init message for parameter server " + std::to_string(init.server) +
                            " reached parameter server " + std::to_string(index_) +
                            " (do the coordinator and this server read the same cluster spec?)");
    values_ = std::move(init.values);
    optimizer_ = Optimizer::create(config_, static_cast<int64_t>(values_.size()));
    try {
        if (!init.state.empty()) restoreState(std::move(init.state));
    } catch (...) {
        optimizer_.reset();  // still uninitialized: the coordinator may not use a half-restored shard
        values_.clear();
        throw;
    }
    baseStep_ = init.base_step;
    version_ = 0;
}

void ParameterShard::restoreState(std::vector<ps::StateBlock> blocks) {
    std::vector<OptimizerStateSpan> mine = optimizer_->state();
    std::vector<std::string> mineNames, theirNames;
    for (const auto& s : mine) mineNames.push_back(s.name);
    for (const auto& b : blocks) theirNames.push_back(b.name);
    std::vector<std::string> sortedMine = mineNames, sortedTheirs = theirNames;
    std::sort(sortedMine.begin(), sortedMine.end());
    std::sort(sortedTheirs.begin(), sortedTheirs.end());
    if (sortedMine != sortedTheirs)
        throw ProtocolError("Init message: optimizer state blocks (" + joinNames(theirNames) +
                            ") are not the ones this server's optimizer keeps (" + joinNames(mineNames) + ")");
    for (OptimizerStateSpan& span : mine) {
        const auto block = std::find_if(blocks.begin(), blocks.end(), [&](const auto& b) { return b.name == span.name; });
        // Init::decode checked every block against the shard size; the optimizer was made for it.
        if (block->values.size() != span.values.size())
            throw ProtocolError("Init message: optimizer state '" + span.name + "' has " +
                                std::to_string(block->values.size()) + " values, the shard " +
                                std::to_string(span.values.size()));
        std::copy(block->values.begin(), block->values.end(), span.values.begin());
    }
    optimizer_->stateRestored();
}

ps::Pushed ParameterShard::apply(const ps::Push& push) {
    const std::string what = "Push message from worker " + std::to_string(push.worker) + " for step " +
                             std::to_string(push.step);
    if (!initialized()) throw ProtocolError(what + ": the shard is not initialized yet (no Init from the coordinator)");
    if (push.gradient.size() != values_.size())
        throw ProtocolError(what + ": a gradient of " + std::to_string(push.gradient.size()) + " values, the shard of " +
                            "parameter server " + std::to_string(index_) + " holds " + std::to_string(values_.size()));
    if (push.pulled_version > version_)
        throw ProtocolError(what + ": pulled version " + std::to_string(push.pulled_version) +
                            " is newer than the shard's version " + std::to_string(version_));
    const int64_t n = static_cast<int64_t>(values_.size());
    optimizer_->update(values_.data(), push.gradient.data(), 0, n, baseStep_ + static_cast<int64_t>(version_) + 1);
    ps::Pushed out;
    out.staleness = version_ - push.pulled_version;
    out.version = ++version_;
    return out;
}

ps::State ParameterShard::state() const {
    ps::State s;
    s.version = version_;
    s.values = values_;
    if (optimizer_)
        for (const OptimizerStateSpan& span : optimizer_->state())
            s.state.push_back({span.name, std::vector<float>(span.values.begin(), span.values.end())});
    return s;
}

}  // namespace trainbench::engine
