#include "engine/layers/batchnorm.h"

#include <sstream>

#include "engine/layers/opcosts.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;
using Flags = dnnl::normalization_flags;

void BatchNorm::ShardViews::make(const memory::desc& shardMd, int shards, const dnnl::engine& eng) {
    bytes = shardMd.get_size();
    mems.clear();
    for (int k = 0; k < shards; ++k) mems.emplace_back(shardMd, eng, static_cast<void*>(nullptr));  // pointed later
    base = nullptr;
}

void BatchNorm::ShardViews::point(void* storage) {
    if (storage == base) return;  // re-pointing zero-fills a blocked layout's padding: only when it moved
    for (size_t k = 0; k < mems.size(); ++k) mems[k].set_data_handle(static_cast<char*>(storage) + k * bytes);
    base = storage;
}

BatchNorm::BatchNorm(CpuDevice& device, Dims sampleShape, float momentum, float epsilon)
    : Layer(device, std::move(sampleShape)), momentum_(momentum), epsilon_(epsilon) {
    if (in_.empty() || in_.size() > 4)
        throw ModelError("batch_norm needs an input of shape [features] or [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    if (!(momentum_ >= 0.0f && momentum_ <= 1.0f))
        throw ModelError("batch_norm momentum must be in [0, 1], got " + std::to_string(momentum_));
    if (!(epsilon_ > 0.0f)) throw ModelError("batch_norm epsilon must be positive, got " + std::to_string(epsilon_));
    channels_ = in_[0];
    out_ = in_;
}

std::string BatchNorm::describe() const {
    std::ostringstream s;
    s << "BatchNorm(" << channels_ << ", momentum " << momentum_ << ", epsilon " << epsilon_
      << (shards_ > 1 ? ", " + std::to_string(shards_) + " statistics shards" : "") << (fusedReLU_ ? ", then ReLU" : "")
      << ")";
    return s.str();
}

void BatchNorm::bindParams(float* params, float* grads) {
    const auto& eng = device_.engine();
    const memory::desc md = Tensor::plainDesc({channels_});
    scale_ = Tensor(md, eng, params);
    shift_ = Tensor(md, eng, params + channels_);
    gradScale_ = Tensor(md, eng, grads);
    gradShift_ = Tensor(md, eng, grads + channels_);
}

void BatchNorm::initParams(Rng& /*rng*/) {
    // Keras' initializers: gamma ones, beta zeros (the layer starts as a plain standardisation).
    std::fill(scale_.data(), scale_.data() + channels_, 1.0f);
    std::fill(shift_.data(), shift_.data() + channels_, 0.0f);
}

void BatchNorm::bindState(float* state) {
    state_ = state;
    const memory::desc md = Tensor::plainDesc({channels_});
    runMean_ = Tensor(md, device_.engine(), state);
    runVariance_ = Tensor(md, device_.engine(), state + channels_);
    std::fill(state, state + channels_, 0.0f);
    std::fill(state + channels_, state + 2 * channels_, 1.0f);
}

void BatchNorm::setStatisticsShards(int n) {
    if (n < 1) throw ModelError("batch_norm: statistics shards must be at least 1, got " + std::to_string(n));
    shards_ = n;
}

std::unique_ptr<BatchNorm::Plan> BatchNorm::makePlan(const memory::desc& inputMd, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    const int64_t batch = inputMd.dims()[0];
    p->shards = training ? shards_ : 1;
    if (batch % p->shards != 0)
        throw ModelError("batch_norm: a batch of " + std::to_string(batch) + " examples does not split into " +
                         std::to_string(p->shards) + " equal statistics shards");
    p->srcMd = Tensor::batchOutermost(inputMd) ? inputMd : Tensor::plainDesc(inputMd.dims());
    const memory::desc shardMd = Tensor::withBatch(p->srcMd, batch / p->shards);
    Flags flags = Flags::use_scale | Flags::use_shift;
    if (!training) flags |= Flags::use_global_stats;
    if (fusedReLU_) flags |= Flags::fuse_norm_relu;
    const auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::batch_normalization_forward::primitive_desc fwdPd({kind, shardMd, epsilon_, flags}, eng);
    p->fwd = dnnl::batch_normalization_forward(fwdPd);
    p->dst = Tensor(p->srcMd, eng);
    p->src.make(shardMd, p->shards, eng);
    p->dstViews.make(shardMd, p->shards, eng);
    p->dstViews.point(p->dst.data());
    const Dims shardDims = shardMd.dims();
    using opcost::NormPass;
    p->fwdOp = addOp(opcost::batchNorm(training ? NormPass::ForwardTraining : NormPass::ForwardInference, shardDims,
                                       fusedReLU_));
    if (!training) {  // normalises with the running statistics
        p->mean.push_back(runMean_.mem());
        p->variance.push_back(runVariance_.mem());
        return p;
    }
    const size_t c = static_cast<size_t>(channels_);
    p->stats = AlignedBuffer(static_cast<size_t>(p->shards) * 2 * c);
    if (p->shards > 1) p->shardGrads = AlignedBuffer(static_cast<size_t>(p->shards - 1) * 2 * c);
    for (int k = 0; k < p->shards; ++k) {
        float* stats = p->stats.data() + static_cast<size_t>(k) * 2 * c;
        p->mean.emplace_back(fwdPd.mean_desc(), eng, stats);
        p->variance.emplace_back(fwdPd.variance_desc(), eng, stats + c);
        if (fusedReLU_) {
            const memory::desc wsMd = fwdPd.workspace_desc();
            p->workspaceStorage.emplace_back(wsMd.get_size() / sizeof(float) + 1);
            p->workspace.emplace_back(wsMd, eng, p->workspaceStorage.back().data());
        }
        if (k == 0) {  // the first shard's gradients go straight into the model's buffer
            p->dScale.push_back(gradScale_.mem());
            p->dShift.push_back(gradShift_.mem());
        } else {
            float* g = p->shardGrads.data() + static_cast<size_t>(k - 1) * 2 * c;
            p->dScale.emplace_back(gradScale_.desc(), eng, g);
            p->dShift.emplace_back(gradShift_.desc(), eng, g + c);
        }
    }
    dnnl::batch_normalization_backward::primitive_desc bwdPd(
        {dnnl::prop_kind::backward, shardMd, shardMd, epsilon_, flags}, eng, fwdPd);
    p->bwd = dnnl::batch_normalization_backward(bwdPd);
    p->gradSrc = Tensor(p->srcMd, eng);
    p->diffDst.make(shardMd, p->shards, eng);
    p->diffSrc.make(shardMd, p->shards, eng);
    p->diffSrc.point(p->gradSrc.data());
    p->bwdOp = addOp(opcost::batchNorm(NormPass::Backward, shardDims, fusedReLU_));
    return p;
}

Tensor& BatchNorm::forward(Tensor& input, bool training) {
    const int64_t batch = batchOf(input);
    const int shards = training ? shards_ : 1;
    // Built for this input layout and shard count; rebuilt when either changed.
    Plan& p = plans_.get(batch, training, [&] { return makePlan(input.desc(), training); },
                         [&](const Plan& q) {
                             return q.shards == shards && (q.srcMd == input.desc() ||
                                                           (!Tensor::batchOutermost(input.desc()) &&
                                                            q.srcMd == Tensor::plainDesc(input.dims())));
                         });
    lastInput_ = &input;
    src_ = &p.inputConv.convert(input, p.srcMd, device_);
    p.src.point(src_->data());
    for (int k = 0; k < p.shards; ++k) {
        const size_t s = training ? static_cast<size_t>(k) : 0;
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, p.src.mems[s]},   {DNNL_ARG_DST, p.dstViews.mems[s]},
                                             {DNNL_ARG_SCALE, scale_.mem()},  {DNNL_ARG_SHIFT, shift_.mem()},
                                             {DNNL_ARG_MEAN, p.mean[s]},      {DNNL_ARG_VARIANCE, p.variance[s]}};
        if (!p.workspace.empty()) args.emplace(DNNL_ARG_WORKSPACE, p.workspace[s]);
        prof::OpTimer timer(p.fwdOp);
        p.fwd.execute(device_.stream(), args);
    }
    if (training) updateRunningStatistics(p);
    return p.dst;
}

void BatchNorm::updateRunningStatistics(const Plan& p) {
    device_.stream().wait();
    const size_t c = static_cast<size_t>(channels_);
    const float keep = momentum_, take = (1.0f - momentum_) / static_cast<float>(p.shards);
    float* mean = runMean_.data();
    float* variance = runVariance_.data();
    for (size_t i = 0; i < c; ++i) {
        float meanSum = 0.0f, varianceSum = 0.0f;
        for (int k = 0; k < p.shards; ++k) {
            meanSum += p.stats.data()[static_cast<size_t>(k) * 2 * c + i];
            varianceSum += p.stats.data()[static_cast<size_t>(k) * 2 * c + c + i];
        }
        mean[i] = keep * mean[i] + take * meanSum;
        variance[i] = keep * variance[i] + take * varianceSum;
    }
}

Tensor* BatchNorm::backward(Tensor& gradOutput) {
    Plan& p = *plans_.current();
    Tensor& gy = p.gradOutConv.convert(gradOutput, p.srcMd, device_);
    p.diffDst.point(gy.data());
    for (int k = 0; k < p.shards; ++k) {
        const size_t s = static_cast<size_t>(k);
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, p.src.mems[s]},           {DNNL_ARG_MEAN, p.mean[s]},
            {DNNL_ARG_VARIANCE, p.variance[s]},      {DNNL_ARG_DIFF_DST, p.diffDst.mems[s]},
            {DNNL_ARG_SCALE, scale_.mem()},          {DNNL_ARG_SHIFT, shift_.mem()},
            {DNNL_ARG_DIFF_SRC, p.diffSrc.mems[s]},
            {DNNL_ARG_DIFF_SCALE, p.dScale[s]},      {DNNL_ARG_DIFF_SHIFT, p.dShift[s]}};
        if (!p.workspace.empty()) args.emplace(DNNL_ARG_WORKSPACE, p.workspace[s]);
        prof::OpTimer timer(p.bwdOp);
        p.bwd.execute(device_.stream(), args);
    }
    if (p.shards > 1) {  // gamma and beta act on every shard: their gradient is the sum over shards
        device_.stream().wait();
        const size_t c = static_cast<size_t>(channels_);
        for (int k = 1; k < p.shards; ++k) {
            const float* g = p.shardGrads.data() + static_cast<size_t>(k - 1) * 2 * c;
            for (size_t i = 0; i < c; ++i) {
                gradScale_.data()[i] += g[i];
                gradShift_.data()[i] += g[c + i];
            }
        }
    }
    if (!needsInputGrad_) return nullptr;
    return &p.gradInputConv.convert(p.gradSrc, lastInput_->desc(), device_);
}

void BatchNorm::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    // In training each statistics shard is one call of the primitive.
    const int shards = training ? shards_ : 1;
    Dims shard = batchDims(batch / shards, in_);
    using opcost::NormPass;
    out.push_back(describedOp(opcost::batchNorm(training ? NormPass::ForwardTraining : NormPass::ForwardInference,
                                                shard, fusedReLU_),
                              StepPart::Forward, {}, nullptr, shards));
    if (training)
        out.push_back(describedOp(opcost::batchNorm(NormPass::Backward, shard, fusedReLU_), StepPart::Backward, {},
                                  nullptr, shards));
}

}  // namespace trainbench::engine
