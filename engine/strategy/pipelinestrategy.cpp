#include "engine/strategy/pipelinestrategy.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/instrument/instrument.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/stagepartition.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

namespace {

using PipeClock = std::chrono::steady_clock;
double secondsFrom(PipeClock::time_point t0) { return std::chrono::duration<double>(PipeClock::now() - t0).count(); }

}  // namespace

// Thrown on a stage that was waiting when another stage failed; the other's error is the step's.
class PipelineStrategy::Aborted : public std::runtime_error {
public:
    Aborted() : std::runtime_error("pipeline aborted: another stage failed") {}
};

// One set of a stage's layers: what it keeps for one micro-batch between its forward and its backward.
struct PipelineStrategy::Slot {
    LayerStack stack;      // the whole model's layers, built on the stage's device; the stage runs its own
    AlignedBuffer grads;   // this set's parameter gradients (the stage's span)
    Tensor input;          // stage 0: the micro-batch's rows; later stages: the hand-off it received
    Tensor gradLogits;     // last stage: d(loss)/d(logits) of the micro-batch
    Tensor gradIn;         // a hand-off of gradients received from the next stage
    int holds = -1;        // the micro-batch whose activations its layers hold (this step), or -1
};

struct PipelineStrategy::Stage {
    std::unique_ptr<CpuDevice> device;
    int first = 0, last = 0;                 // its layers: [first, last) of the model's
    int64_t paramOffset = 0, paramCount = 0; // its span of the flat parameter buffer
    int64_t stateOffset = 0, stateCount = 0; // and of the model's state (batch norm statistics)
    std::vector<float> stateKeep;            // recompute: the state before a forward run again
    std::vector<std::unique_ptr<Slot>> slots;
    std::vector<double> layerSeconds;  // per model layer: its time in the measured step (its own layers only)
    std::thread thread;
    bool gradsStarted = false;  // this step's first micro-batch gradients are in (later ones add)
    int recomputed = 0;         // forwards run again this step (recompute)
    double lossSum = 0.0;       // last stage: loss x examples over the micro-batches
    double compute = 0.0, comm = 0.0, wait = 0.0;
    std::exception_ptr error;
};

// A micro-batch's activations (or their gradients) handed from one stage to its neighbour.
struct PipelineStrategy::Handoff {
    AlignedBuffer data;
    size_t bytes = 0;
    dnnl::memory::desc desc;
    uint64_t filled = 0;  // the step generation it was filled in
    bool none = false;    // no gradient flows further back (the stages before hold no parameters)
};

PipelineStrategy::PipelineStrategy(const ReplicaSpec& spec, const PipelineSpec& pipeline)
    : spec_(pipeline),
      evalDevice_(std::make_unique<CpuDevice>(spec.threads)),
      model_(std::make_unique<Model>(spec.model, spec.sampleShape, spec.numClasses, *evalDevice_, spec.seed)),
      optimizer_(Optimizer::create(spec.optimizer, model_->paramCount())),
      update_(*model_, *optimizer_) {
    if (spec.threads < 1) throw std::invalid_argument("pipeline needs at least one thread per stage");
    if (pipeline.microBatches < 1)
        throw std::invalid_argument("strategy.micro_batches must be at least 1, got " + std::to_string(pipeline.microBatches));
    const int K = pipeline.stages;
    if (K < 1) throw std::invalid_argument("strategy.stages must be at least 1, got " + std::to_string(K));
    const auto& layers = model_->layers();
    starts_ = ::trainbench::engine::stageStarts(layers, K, pipeline.boundaries, 32);
    ops_ = pipelineOps(pipeline.schedule, K, pipeline.microBatches);
    for (int k = 0; k < K; ++k) {
        auto s = std::make_unique<Stage>();
        s->device = std::make_unique<CpuDevice>(spec.threads);
        s->layerSeconds.assign(layers.size(), 0.0);
        const int sets = pipeline.recompute ? 1 : microBatchesInFlight(pipeline.schedule, K, pipeline.microBatches, k);
        for (int j = 0; j < sets; ++j) {
            auto slot = std::make_unique<Slot>();
            slot->stack = buildLayerStack(spec.model, spec.sampleShape, spec.numClasses, *s->device);
            s->slots.push_back(std::move(slot));
        }
        stages_.push_back(std::move(s));
    }
    place(starts_);
    forward_.resize(static_cast<size_t>(K > 1 ? K - 1 : 0));
    backward_.resize(forward_.size());
    for (size_t b = 0; b < forward_.size(); ++b) {
        forward_[b] = std::vector<Handoff>(static_cast<size_t>(pipeline.microBatches));
        backward_[b] = std::vector<Handoff>(static_cast<size_t>(pipeline.microBatches));
    }
    // Stage 0 runs on the caller's thread (its phases are the step's, as replica 0's are mirrored's).
    for (int k = 1; k < K; ++k) stages_[static_cast<size_t>(k)]->thread = std::thread([this, k] { stageLoop(k); });
}

void PipelineStrategy::place(const std::vector<int>& starts) {
    starts_ = starts;
    const auto& layers = model_->layers();
    std::vector<int64_t> offsets(layers.size() + 1, 0), stateOffsets(layers.size() + 1, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
        offsets[i + 1] = offsets[i] + layers[i]->paramCount();
        stateOffsets[i + 1] = stateOffsets[i] + layers[i]->stateCount();
    }
    float* params = model_->params();
    float* state = model_->state().data();
    const int K = static_cast<int>(stages_.size());
    for (int k = 0; k < K; ++k) {
        Stage& s = *stages_[static_cast<size_t>(k)];
        s.first = starts_[static_cast<size_t>(k)];
        s.last = k + 1 < K ? starts_[static_cast<size_t>(k) + 1] : static_cast<int>(layers.size());
        s.paramOffset = offsets[static_cast<size_t>(s.first)];
        s.paramCount = offsets[static_cast<size_t>(s.last)] - s.paramOffset;
        s.stateOffset = stateOffsets[static_cast<size_t>(s.first)];
        s.stateCount = stateOffsets[static_cast<size_t>(s.last)] - s.stateOffset;
        s.stateKeep.assign(static_cast<size_t>(s.stateCount), 0.0f);
        for (auto& slot : s.slots) {
            slot->grads = AlignedBuffer(static_cast<size_t>(std::max<int64_t>(s.paramCount, 1)));
            // The stage's layers work on the model's parameters and state, each set on its own
            // gradients. (Layers of other stages keep whatever they were bound to: they never run here.)
            for (int i = s.first; i < s.last; ++i) {
                Layer& l = *slot->stack.layers[static_cast<size_t>(i)];
                if (l.stateCount() > 0) {
                    // bindState resets the running statistics to their initial values: keep the model's.
                    float* at = state + stateOffsets[static_cast<size_t>(i)];
                    std::vector<float> keep(at, at + l.stateCount());
                    l.bindState(at);
                    std::copy(keep.begin(), keep.end(), at);
                }
                if (l.paramCount() > 0)
                    l.bindParams(params + offsets[static_cast<size_t>(i)],
                                 slot->grads.data() + (offsets[static_cast<size_t>(i)] - s.paramOffset));
            }
        }
    }
}

void PipelineStrategy::rebalanceFromMeasurements() {
    std::vector<double> seconds(model_->layers().size(), 0.0);
    for (auto& s : stages_)
        for (int i = s->first; i < s->last; ++i) seconds[static_cast<size_t>(i)] = s->layerSeconds[static_cast<size_t>(i)];
    const std::vector<int> balanced = balanceStages(seconds, static_cast<int>(stages_.size()));
    if (balanced != starts_) place(balanced);
}

PipelineStrategy::~PipelineStrategy() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
    }
    cv_.notify_all();
    for (auto& s : stages_)
        if (s->thread.joinable()) s->thread.join();
}

std::string PipelineStrategy::devices() const {
    return "cpu:" + std::to_string(stages_[0]->device->threads()) + "x" + std::to_string(stages_.size());
}

void PipelineStrategy::bindThreads() { stages_.front()->device->bindThreads(); }

int PipelineStrategy::slotsOf(int stage) const { return static_cast<int>(stages_.at(static_cast<size_t>(stage))->slots.size()); }

int PipelineStrategy::recomputedOf(int stage) const { return stages_.at(static_cast<size_t>(stage))->recomputed; }

std::vector<prof::OpRow> PipelineStrategy::opStats() {
    std::vector<std::vector<prof::OpRow>> perStage;
    for (auto& s : stages_) perStage.push_back(s->device->ops().snapshot());
    perStage.push_back(evalDevice_->ops().snapshot());
    return prof::mergeOpRows(perStage);
}

void PipelineStrategy::stageLoop(int k) {
    const std::string name = "tb-stage" + std::to_string(k);
    setThreadName(name.c_str());
    Stage& s = *stages_[static_cast<size_t>(k)];
    s.device->bindThreads();
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
            if (quit_) return;
            seen = generation_;
        }
        s.error = nullptr;
        try {
            runStage(k, {});
        } catch (const Aborted&) {
        } catch (...) {
            s.error = std::current_exception();
            abort();
        }
        {
            std::lock_guard lock(mutex_);
            --running_;
        }
        cv_.notify_all();
    }
}

void PipelineStrategy::abort() {
    {
        std::lock_guard lock(mutex_);
        aborted_ = true;
    }
    cv_.notify_all();
}

void PipelineStrategy::runStage(int k, const std::function<void()>& afterForwards) {
    Stage& s = *stages_[static_cast<size_t>(k)];
    s.gradsStarted = false;
    s.recomputed = 0;
    for (auto& slot : s.slots) slot->holds = -1;
    s.lossSum = s.compute = s.comm = s.wait = 0.0;
    int forwards = 0;
    for (const PipelineOp& op : ops_[static_cast<size_t>(k)]) {
        if (op.forward) {
            forward(s, k, op.micro);
            if (++forwards == spec_.microBatches && afterForwards) {
                TB_PHASE(Input);  // the next batch, prepared on the training thread
                afterForwards();
            }
        } else {
            backward(s, k, op.micro);
        }
    }
}

PipelineStrategy::Handoff& PipelineStrategy::receive(std::vector<Handoff>& box, int micro, double& wait) {
    Handoff& h = box[static_cast<size_t>(micro)];
    const auto t0 = PipeClock::now();
    TB_PHASE(Communication);  // blocked on the neighbouring stage: the bubble, or a slower stage
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return aborted_ || h.filled == generation_; });
    if (aborted_ && h.filled != generation_) throw Aborted();
    wait += secondsFrom(t0);
    return h;
}

void PipelineStrategy::send(std::vector<Handoff>& box, int micro, const Tensor* t) {
    Handoff& h = box[static_cast<size_t>(micro)];
    // The receiver reads it only after `filled` says this step: no lock needed to write it.
    h.none = t == nullptr;
    if (t) {
        h.desc = t->desc();
        h.bytes = h.desc.get_size();
        const size_t floats = (h.bytes + sizeof(float) - 1) / sizeof(float);
        if (h.data.size() < floats) h.data = AlignedBuffer(floats);
        std::memcpy(h.data.data(), t->data(), h.bytes);
    }
    {
        std::lock_guard lock(mutex_);
        h.filled = generation_;
    }
    cv_.notify_all();
}

void PipelineStrategy::forward(Stage& s, int k, int micro) {
    Slot& slot = *s.slots[static_cast<size_t>(micro) % s.slots.size()];
    if (k > 0) receive(forward_[static_cast<size_t>(k) - 1], micro, s.wait);
    bindInput(s, slot, k, micro);
    const auto t0 = PipeClock::now();
    Tensor* t = nullptr;
    {
        // The trace's pipeline timeline: one block per stage and micro-batch, as in the GPipe figure.
        TB_ZONE_ARG("stage", "forward micro-batch", micro);
        t = forwardLayers(s, slot, k, micro, /*countLoss=*/true);
    }
    s.compute += secondsFrom(t0);
    if (k + 1 < static_cast<int>(stages_.size())) {
        const auto c0 = PipeClock::now();
        send(forward_[static_cast<size_t>(k)], micro, t);
        s.comm += secondsFrom(c0);
    }
}

Tensor* PipelineStrategy::forwardLayers(Stage& s, Slot& slot, int k, int micro, bool countLoss) {
    const int64_t rows = microRows_[static_cast<size_t>(micro)];
    Tensor* t = &slot.input;
    {
        TB_PHASE(Forward);
        for (int i = s.first; i < s.last; ++i) {
            Layer& l = *slot.stack.layers[static_cast<size_t>(i)];
            // Micro-batch 0 draws the dropout masks a single device would; the others their own.
            const uint64_t seed = deriveSeed(stepSeed_, kSeedDropout, static_cast<uint64_t>(i));
            l.setStepSeed(micro == 0 ? seed : deriveSeed(seed, kSeedReplica, static_cast<uint64_t>(micro)));
            if (measuring_) {
                const auto l0 = PipeClock::now();
                t = &l.forward(*t, /*training=*/true);
                s.layerSeconds[static_cast<size_t>(i)] += secondsFrom(l0);
            } else {
                t = &l.forward(*t, /*training=*/true);
            }
        }
        s.device->stream().wait();
    }
    const bool last = k + 1 == static_cast<int>(stages_.size());
    if (last) {
        TB_PHASE(Forward);
        if (slot.gradLogits.empty() || slot.gradLogits.dims()[0] != rows)
            slot.gradLogits = Tensor(Tensor::plainDesc({rows, model_->numClasses()}), s.device->engine());
        // Divided by the global batch: the micro-batches' gradients add up to the whole batch's.
        const LossResult r = SoftmaxCrossEntropy::compute(*t, batch_.y + microFirst_[static_cast<size_t>(micro)],
                                                          &slot.gradLogits, batch_.count);
        if (countLoss) s.lossSum += r.loss * static_cast<double>(rows);
    }
    slot.holds = micro;
    return t;
}

// The view of micro-batch `micro`'s input on stage k: its rows of the batch, or the hand-off received.
void PipelineStrategy::bindInput(Stage& s, Slot& slot, int k, int micro) {
    const int64_t rows = microRows_[static_cast<size_t>(micro)];
    if (k == 0) {
        const Dims& sample = model_->sampleShape();
        int64_t exampleSize = 1;
        for (int64_t d : sample) exampleSize *= d;
        Dims dims{rows};
        dims.insert(dims.end(), sample.begin(), sample.end());
        float* x = batch_.x + microFirst_[static_cast<size_t>(micro)] * exampleSize;
        slot.input = Tensor(Tensor::plainDesc(dims), s.device->engine(), x);
    } else {
        Handoff& h = forward_[static_cast<size_t>(k) - 1][static_cast<size_t>(micro)];
        slot.input = Tensor(h.desc, s.device->engine(), h.data.data());
    }
}

void PipelineStrategy::backward(Stage& s, int k, int micro) {
    Slot& slot = *s.slots[static_cast<size_t>(micro) % s.slots.size()];
    const bool last = k + 1 == static_cast<int>(stages_.size());
    Tensor* g = nullptr;
    if (last) {
        g = &slot.gradLogits;
    } else {
        Handoff& h = receive(backward_[static_cast<size_t>(k)], micro, s.wait);
        if (h.none) {  // the stages after hold the first parameters: nothing here needs a gradient
            if (k > 0) send(backward_[static_cast<size_t>(k) - 1], micro, nullptr);
            return;
        }
        slot.gradIn = Tensor(h.desc, s.device->engine(), h.data.data());
        g = &slot.gradIn;
    }
    const auto t0 = PipeClock::now();
    {
        TB_ZONE_ARG("stage", "backward micro-batch", micro);
        if (slot.holds != micro) {
            TB_ZONE_ARG("stage", "recompute micro-batch", micro);
            // Recompute: this micro-batch's activations again, from its input, with the same dropout
            // masks; batch norm's running statistics are put back as the first forward left them.
            bindInput(s, slot, k, micro);
            float* state = model_->state().data() + s.stateOffset;
            std::copy(state, state + s.stateCount, s.stateKeep.begin());
            forwardLayers(s, slot, k, micro, /*countLoss=*/false);
            std::copy(s.stateKeep.begin(), s.stateKeep.end(), state);
            ++s.recomputed;
        }
        {
            TB_PHASE(Backward);
            for (int i = s.last; i-- > s.first;) {
                const auto l0 = PipeClock::now();
                g = slot.stack.layers[static_cast<size_t>(i)]->backward(*g);
                if (measuring_) s.layerSeconds[static_cast<size_t>(i)] += secondsFrom(l0);
                if (!g) break;
            }
            s.device->stream().wait();
            // This micro-batch's parameter gradients into the stage's sum, in the schedule's fixed order.
            if (s.paramCount > 0) {
                float* sum = model_->grads() + s.paramOffset;
                const float* mine = slot.grads.data();
                if (!s.gradsStarted) std::memcpy(sum, mine, static_cast<size_t>(s.paramCount) * sizeof(float));
                else
                    for (int64_t j = 0; j < s.paramCount; ++j) sum[j] += mine[j];
                s.gradsStarted = true;
            }
        }
    }
    s.compute += secondsFrom(t0);
    if (k > 0) {
        const auto c0 = PipeClock::now();
        send(backward_[static_cast<size_t>(k) - 1], micro, g);
        s.comm += secondsFrom(c0);
    }
}

StrategyStep PipelineStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                    const std::function<void()>& midpoint) {
    const int M = spec_.microBatches;
    if (batch.count < M)
        throw ModelError("a batch of " + std::to_string(batch.count) + " examples cannot make " + std::to_string(M) +
                         " micro-batches (strategy.micro_batches)");
    microRows_.assign(static_cast<size_t>(M), batch.count / M);
    for (int64_t m = 0; m < batch.count % M; ++m) ++microRows_[static_cast<size_t>(m)];
    microFirst_.assign(static_cast<size_t>(M), 0);
    for (size_t m = 1; m < microFirst_.size(); ++m) microFirst_[m] = microFirst_[m - 1] + microRows_[m - 1];
    // Without boundaries from the user, the third step this strategy runs (its kernels' plans made by
    // then) is timed layer by layer, and the stages are cut again where those times balance.
    ++stepsRun_;
    measuring_ = spec_.boundaries.empty() && stages_.size() > 1 && stepsRun_ == kMeasuredStep;
    const auto t0 = PipeClock::now();
    {
        std::lock_guard lock(mutex_);
        batch_ = batch;
        stepIndex_ = step;
        stepSeed_ = stepSeed;
        aborted_ = false;
        running_ = static_cast<int>(stages_.size()) - 1;
        ++generation_;
    }
    cv_.notify_all();
    Stage& first = *stages_.front();
    first.error = nullptr;
    try {
        runStage(0, midpoint);
    } catch (const Aborted&) {
    } catch (...) {
        first.error = std::current_exception();
        abort();
    }
    {
        TB_PHASE(Communication);  // stage 0 done: waiting for the last backwards of the others
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return running_ == 0; });
    }
    for (auto& s : stages_)
        if (s->error) std::rethrow_exception(s->error);
    const double wall = secondsFrom(t0);
    if (measuring_) {
        measuring_ = false;
        rebalanceFromMeasurements();
    }
    {
        TB_PHASE(Optimizer);
        for (const auto& [offset, count] : model_->gradientSpans()) update_(offset, count, step);
    }
    StrategyStep out;
    const double K = static_cast<double>(stages_.size());
    for (size_t k = 0; k < stages_.size(); ++k) {
        const Stage& s = *stages_[k];
        ReplicaStep r;
        r.rank = static_cast<int>(k);
        r.samples = batch.count;
        r.compute_seconds = s.compute;
        r.comm_seconds = s.comm;
        // Idle: blocked on a neighbour, or done before the slowest stage (the bubble and imbalance).
        r.wait_seconds = std::max(s.wait, wall - s.compute - s.comm);
        out.comm_seconds += r.comm_seconds / K;
        out.wait_seconds += r.wait_seconds / K;
        out.replicas.push_back(r);
    }
    out.loss = stages_.back()->lossSum / static_cast<double>(batch.count);
    return out;
}

}  // namespace trainbench::engine
