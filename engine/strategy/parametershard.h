#pragma once
// The part of the model's parameters one parameter server holds, packed (psprotocol.h), and the
// optimizer that updates it: Init sets it up, every Push advances it by one version, GetState reads
// it for a checkpoint. Not thread-safe: the server's io thread is its only user.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/optim/optimizer.h"
#include "engine/optim/optimizerconfig.h"
#include "engine/strategy/psprotocol.h"

namespace trainbench::engine {

class ParameterShard {
public:
    ParameterShard(const OptimizerConfig& optimizer, uint32_t serverIndex);

    // Takes the shard's values and optimizer state (empty: a fresh optimizer). Throws ProtocolError
    // when `init` is for another server, comes a second time, or its state blocks are not the ones
    // this server's optimizer keeps (names and sizes).
    void init(ps::Init init);
    bool initialized() const { return optimizer_ != nullptr; }

    // Applies one worker's gradient as update number base_step + version + 1, and returns what the
    // worker is told. Throws ProtocolError for a gradient of another size than the shard or a pulled
    // version the shard never had.
    ps::Pushed apply(const ps::Push& push);

    uint64_t version() const { return version_; }
    const std::vector<float>& values() const { return values_; }
    // Values and a copy of the optimizer state, for a checkpoint.
    ps::State state() const;

private:
    void restoreState(std::vector<ps::StateBlock> blocks);

    OptimizerConfig config_;
    uint32_t index_;
    std::unique_ptr<Optimizer> optimizer_;  // null until Init
    std::vector<float> values_;
    int64_t baseStep_ = 0;
    uint64_t version_ = 0;
};

}  // namespace trainbench::engine
