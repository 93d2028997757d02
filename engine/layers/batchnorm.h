#pragma once
// Batch normalisation (Ioffe & Szegedy) on oneDNN, per channel: over N, H, W after a convolution, over
// N after a dense layer. Training normalises with the batch's statistics and updates the running ones
// (Keras' rule: running = momentum * running + (1 - momentum) * batch, with the biased batch variance,
// as Keras keeps it); evaluation normalises with the running statistics. Scale (gamma) and shift
// (beta) are parameters; the running mean and variance are the model's non-trainable state.
//
// With statistics shards (setStatisticsShards(n)) a training batch is normalised as n equal
// consecutive parts, each with its own statistics, as n TPU cores each running batch norm on its
// own part of the global batch do; the running statistics move towards the mean over the shards of
// the shard statistics (the cross-replica mean of the replicas' updates, as tf.distribute aggregates
// them). One pass over the batch: the primitive runs once per shard on that shard's slice of memory.
#include <vector>

#include "engine/layers/layer.h"
#include "engine/layers/layoutconverter.h"

namespace trainbench::engine {

class BatchNorm : public Layer {
public:
    BatchNorm(CpuDevice& device, Dims sampleShape, float momentum, float epsilon);

    std::string describe() const override;
    void describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const override;
    const char* kind() const override { return "batch_norm"; }
    int64_t paramCount() const override { return 2 * channels_; }  // gamma, then beta
    void bindParams(float* params, float* grads) override;
    void initParams(Rng& rng) override;
    int64_t stateCount() const override { return 2 * channels_; }  // running mean, then running variance
    void bindState(float* state) override;
    Tensor& forward(Tensor& input, bool training) override;
    Tensor* backward(Tensor& gradOutput) override;
    bool fuseReLU() override { return fusedReLU_ = true; }
    bool fusedReLUBackward() const override { return fusedReLU_; }
    void setStatisticsShards(int n) override;

    int64_t channels() const { return channels_; }
    const float* runningMean() const { return state_; }
    const float* runningVariance() const { return state_ + channels_; }

private:
    // Memory objects over consecutive equal slices (one per shard) of a tensor whose batch dimension
    // is outermost; re-pointed only when the tensor's storage moves.
    struct ShardViews {
        std::vector<dnnl::memory> mems;
        size_t bytes = 0;  // per shard
        const void* base = nullptr;
        void make(const dnnl::memory::desc& shardMd, int shards, const dnnl::engine& eng);
        void point(void* storage);
    };
    struct Plan {
        dnnl::memory::desc srcMd;    // the layout the primitives run on (the input's, or plain)
        int shards = 1;
        dnnl::batch_normalization_forward fwd;
        dnnl::batch_normalization_backward bwd;
        Tensor dst, gradSrc;
        ShardViews src, dstViews, diffDst, diffSrc;
        std::vector<dnnl::memory> mean, variance, workspace;  // per shard
        AlignedBuffer stats;         // training: [shard][mean C | variance C]
        AlignedBuffer shardGrads;    // shards > 1: [shard][dgamma C | dbeta C] of shards 1..n-1
        std::vector<AlignedBuffer> workspaceStorage;
        std::vector<dnnl::memory> dScale, dShift;  // per shard
        LayoutConverter inputConv, gradOutConv, gradInputConv;
        prof::OpStat* fwdOp = nullptr;  // per-op statistics: one call per shard
        prof::OpStat* bwdOp = nullptr;
    };
    std::unique_ptr<Plan> makePlan(const dnnl::memory::desc& inputMd, bool training);
    void updateRunningStatistics(const Plan& p);

    int64_t channels_;
    float momentum_, epsilon_;
    bool fusedReLU_ = false;
    int shards_ = 1;
    float* state_ = nullptr;
    Tensor scale_, shift_, gradScale_, gradShift_, runMean_, runVariance_;
    PlanCache<Plan> plans_;
    Tensor* lastInput_ = nullptr;
    Tensor* src_ = nullptr;  // the input in the plan's layout
};

}  // namespace trainbench::engine
