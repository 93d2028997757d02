#include "engine/strategy/tensorstrategy.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/instrument/instrument.h"
#include "engine/layers/conv2d.h"
#include "engine/layers/dense.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/util/elapsed.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

namespace {

using TensorClock = std::chrono::steady_clock;

bool isSplittable(const Layer& l) {
    const std::string k = l.kind();
    return k == "dense" || k == "conv2d";
}

// Layers that work on each channel (or feature) alone: they run on a slice as on the whole.
bool worksPerSlice(const Layer& l) {
    const std::string k = l.kind();
    return k == "relu" || k == "maxpool2d" || k == "batch_norm" || k == "dropout" || k == "flatten" ||
           k == "global_avg_pool";
}

// [first, last) of device d's share of n items split over `devices` (the first n % devices get one more).
std::pair<int64_t, int64_t> shareOf(int64_t n, int devices, int d) {
    const int64_t base = n / devices, extra = n % devices;
    const int64_t first = d * base + std::min<int64_t>(d, extra);
    return {first, first + base + (d < extra ? 1 : 0)};
}

int64_t product(const Dims& d) {
    int64_t p = 1;
    for (int64_t v : d) p *= v;
    return p;
}

// A dense or convolution layer's weights: [outs, ins, k, k] (k = 1 for dense), then a bias of outs.
struct SplitShape {
    int64_t outs = 0, ins = 0, kk = 1;
    bool bias = false;
};
SplitShape splitShape(const Layer& l) {
    SplitShape s;
    if (const auto* dense = dynamic_cast<const Dense*>(&l)) {
        s.outs = dense->units();
        s.ins = dense->inFeatures();
        s.bias = dense->hasBias();
    } else if (const auto* conv = dynamic_cast<const Conv2D*>(&l)) {
        s.outs = conv->filters();
        s.ins = conv->inChannels();
        s.kk = conv->kernel() * conv->kernel();
        s.bias = conv->hasBias();
    } else {
        throw std::logic_error(std::string("tensor: a ") + l.kind() + " layer is not split");
    }
    return s;
}

std::string layerName(const std::vector<std::unique_ptr<Layer>>& layers, size_t i) {
    return "layer " + std::to_string(i) + " (" + layers[i]->kind() + ")";
}

}  // namespace

const char* tensorSplitName(TensorSplit split) {
    switch (split) {
        case TensorSplit::Whole: return "whole";
        case TensorSplit::Columns: return "columns";
        case TensorSplit::Rows: return "rows";
        case TensorSplit::PerSlice: return "per-slice";
    }
    return "?";
}

TensorPlan planTensorSplits(const std::vector<std::unique_ptr<Layer>>& layers, int devices) {
    if (devices < 1) throw std::invalid_argument("strategy.tensor must be at least 1, got " + std::to_string(devices));
    TensorPlan plan;
    plan.splits.assign(layers.size(), TensorSplit::Whole);
    if (devices == 1) return plan;
    bool split = false;  // the activation entering layer i is split over the devices
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& l = *layers[i];
        if (isSplittable(l)) {
            if (split) {
                plan.splits[i] = TensorSplit::Rows;
                split = false;
                continue;
            }
            // Split by outputs only when what follows can take a split input: per-slice layers up to
            // a layer split by its inputs, or the end (the logits are gathered).
            size_t j = i + 1;
            while (j < layers.size() && worksPerSlice(*layers[j])) ++j;
            const bool next = j == layers.size() ? std::string(l.kind()) == "dense" : isSplittable(*layers[j]);
            if (next && l.outputShape()[0] >= devices) {
                plan.splits[i] = TensorSplit::Columns;
                split = true;
            }
        } else if (split) {
            if (!worksPerSlice(l))
                throw std::logic_error(layerName(layers, i) + " cannot take a split input");  // ruled out above
            plan.splits[i] = TensorSplit::PerSlice;
        }
    }
    plan.gatherLogits = split;
    return plan;
}

// A stretch of floats of the model's buffer and where it is in a device's.
struct TensorStrategy::Run {
    int64_t model = 0, device = 0, count = 0;
    bool owned = true;  // this device's copy is the one the model takes back (every device's slices; device 0's whole layers)
};

struct TensorStrategy::Device {
    std::unique_ptr<CpuDevice> cpu;
    LayerStack stack;
    AlignedBuffer params, grads, state;
    std::vector<Run> paramRuns, stateRuns;
    int64_t logitsFirst = 0, logitsLast = 0;  // its columns of the gathered logits
    Tensor input, logits, gradLogits, gradSlice;
    std::thread thread;
    double loss = 0.0;
    double compute = 0.0, comm = 0.0, wait = 0.0;
    std::exception_ptr error;
    size_t index = 0;
};

class TensorStrategy::Aborted : public std::runtime_error {
public:
    Aborted() : std::runtime_error("tensor parallel step aborted: another device failed") {}
};

TensorStrategy::TensorStrategy(const ReplicaSpec& spec, int devices)
    : evalDevice_(std::make_unique<CpuDevice>(spec.threads)),
      model_(std::make_unique<Model>(spec.model, spec.sampleShape, spec.numClasses, *evalDevice_, spec.seed)),
      optimizer_(Optimizer::create(spec.optimizer, model_->paramCount())),
      update_(*model_, *optimizer_) {
    if (spec.threads < 1) throw std::invalid_argument("tensor needs at least one thread per device");
    const auto& layers = model_->layers();
    plan_ = planTensorSplits(layers, devices);
    const std::vector<size_t> order = layerExecutionOrder(spec.model.layers);
    if (order.size() != layers.size()) throw std::logic_error("tensor: the model's layers do not match its spec");

    // The model's offsets of every layer's parameters and state.
    std::vector<int64_t> paramAt(layers.size() + 1, 0), stateAt(layers.size() + 1, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
        paramAt[i + 1] = paramAt[i] + layers[i]->paramCount();
        stateAt[i + 1] = stateAt[i] + layers[i]->stateCount();
    }
    // A ReLU after a layer split by its inputs must wait for the sum: it is not fused into that layer.
    std::vector<bool> apart(layers.size(), false);
    for (size_t i = 0; i < layers.size(); ++i) apart[i] = plan_.splits[i] == TensorSplit::Rows;

    for (int d = 0; d < devices; ++d) {
        auto dev = std::make_unique<Device>();
        dev->cpu = std::make_unique<CpuDevice>(spec.threads);
        dev->index = static_cast<size_t>(d);
        // This device's model: split layers narrowed to its share.
        ModelSpec mine = spec.model;
        mine.initial.reset();
        int64_t classes = spec.numClasses;
        for (size_t i = 0; i < layers.size(); ++i) {
            LayerSpec& ls = mine.layers[order[i]];
            const Layer& l = *layers[i];
            if (plan_.splits[i] == TensorSplit::Columns) {
                const auto [first, last] = shareOf(l.outputShape()[0], devices, d);
                if (ls.kind == LayerKind::Dense) ls.units = static_cast<int>(last - first);
                else ls.filters = static_cast<int>(last - first);
                if (i + 1 == layers.size() || std::all_of(layers.begin() + static_cast<long>(i) + 1, layers.end(),
                                                          [](const auto& x) { return worksPerSlice(*x); })) {
                    classes = last - first;
                    dev->logitsFirst = first;
                    dev->logitsLast = last;
                }
            } else if (plan_.splits[i] == TensorSplit::Rows) {
                ls.bias = ls.bias && d == 0;  // added once, after the sum
            }
        }
        try {
            dev->stack = buildLayerStack(mine, spec.sampleShape, classes, *dev->cpu, &apart);
        } catch (const ModelError& e) {
            throw ModelError("tensor device " + std::to_string(d) + " of " + std::to_string(devices) + ": " + e.what());
        }
        auto& own = dev->stack.layers;
        dev->params = AlignedBuffer(static_cast<size_t>(std::max<int64_t>(dev->stack.paramCount, 1)));
        dev->grads = AlignedBuffer(dev->params.size());
        dev->state = AlignedBuffer(static_cast<size_t>(std::max<int64_t>(dev->stack.stateCount, 1)));
        int64_t p = 0, s = 0;
        // The split dimension of the activation entering each layer: its share, and floats per item.
        int64_t sliceFirst = 0, sliceLast = 0, perItem = 1;
        for (size_t i = 0; i < layers.size(); ++i) {
            const Layer& full = *layers[i];
            Layer& l = *own[i];
            const int64_t pm = paramAt[i], sm = stateAt[i];
            switch (plan_.splits[i]) {
                case TensorSplit::Whole:
                    if (l.paramCount() != full.paramCount() || l.stateCount() != full.stateCount())
                        throw std::logic_error("tensor: " + layerName(layers, i) + " differs on device " + std::to_string(d));
                    if (l.paramCount() > 0) dev->paramRuns.push_back({pm, p, l.paramCount(), d == 0});
                    if (l.stateCount() > 0) dev->stateRuns.push_back({sm, s, l.stateCount(), d == 0});
                    break;
                case TensorSplit::Columns: {
                    // Weights [out, in(, k, k)]: this device's outputs are one stretch of them.
                    const SplitShape sh = splitShape(full);
                    const auto [first, last] = shareOf(sh.outs, devices, d);
                    const int64_t n = last - first, w = sh.ins * sh.kk;
                    dev->paramRuns.push_back({pm + first * w, p, n * w, true});
                    if (sh.bias) dev->paramRuns.push_back({pm + sh.outs * w + first, p + n * w, n, true});
                    if (l.paramCount() != n * w + (sh.bias ? n : 0))
                        throw std::logic_error("tensor: " + layerName(layers, i) + " has " + std::to_string(l.paramCount()) +
                                               " parameters on device " + std::to_string(d));
                    sliceFirst = first;
                    sliceLast = last;
                    perItem = product(full.outputShape()) / sh.outs;
                    break;
                }
                case TensorSplit::Rows: {
                    // Weights [out, in(, k, k)]: per output, this device's stretch of its inputs (a dense
                    // layer's inputs are the split channels' values, perItem each).
                    const SplitShape sh = splitShape(full);
                    const bool dense = std::string(full.kind()) == "dense";
                    const int64_t firstIn = dense ? sliceFirst * perItem : sliceFirst;
                    const int64_t lastIn = dense ? sliceLast * perItem : sliceLast;
                    const int64_t n = lastIn - firstIn, kk = sh.kk, outs = sh.outs, ins = sh.ins;
                    for (int64_t o = 0; o < outs; ++o)
                        dev->paramRuns.push_back({pm + (o * ins + firstIn) * kk, p + o * n * kk, n * kk, true});
                    const bool bias = sh.bias && d == 0;
                    if (bias) dev->paramRuns.push_back({pm + outs * ins * kk, p + outs * n * kk, outs, true});
                    if (l.paramCount() != outs * n * kk + (bias ? outs : 0))
                        throw std::logic_error("tensor: " + layerName(layers, i) + " has " + std::to_string(l.paramCount()) +
                                               " parameters on device " + std::to_string(d));
                    break;
                }
                case TensorSplit::PerSlice: {
                    const int64_t items = full.inputShape()[0];
                    const int64_t n = sliceLast - sliceFirst;
                    // Batch norm: scale and shift, running mean and variance, one float per channel each.
                    if (full.paramCount() > 0) {
                        dev->paramRuns.push_back({pm + sliceFirst, p, n, true});
                        dev->paramRuns.push_back({pm + items + sliceFirst, p + n, n, true});
                    }
                    if (full.stateCount() > 0) {
                        dev->stateRuns.push_back({sm + sliceFirst, s, n, true});
                        dev->stateRuns.push_back({sm + items + sliceFirst, s + n, n, true});
                    }
                    if (std::string(full.kind()) == "flatten") {
                        sliceFirst *= perItem;
                        sliceLast *= perItem;
                        perItem = 1;
                    } else {
                        perItem = product(full.outputShape()) / full.outputShape()[0];
                    }
                    break;
                }
            }
            if (l.stateCount() > 0) l.bindState(dev->state.data() + s);
            if (l.paramCount() > 0) l.bindParams(dev->params.data() + p, dev->grads.data() + p);
            p += l.paramCount();
            s += l.stateCount();
        }
        devices_.push_back(std::move(dev));
    }
    published_.assign(static_cast<size_t>(devices), nullptr);
    publishedCounts_.assign(static_cast<size_t>(devices), 0);
    // Device 0 runs on the caller's thread, as replica 0 does under mirrored.
    for (int d = 1; d < devices; ++d) devices_[static_cast<size_t>(d)]->thread = std::thread([this, d] { deviceLoop(d); });
}

TensorStrategy::~TensorStrategy() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
    }
    cv_.notify_all();
    for (auto& d : devices_)
        if (d->thread.joinable()) d->thread.join();
}

std::string TensorStrategy::devices() const {
    return "cpu:" + std::to_string(devices_[0]->cpu->threads()) + "x" + std::to_string(devices_.size());
}

void TensorStrategy::bindThreads() { devices_.front()->cpu->bindThreads(); }

int64_t TensorStrategy::paramsOn(int d) const { return devices_.at(static_cast<size_t>(d))->stack.paramCount; }

std::vector<prof::OpRow> TensorStrategy::opStats() {
    std::vector<std::vector<prof::OpRow>> perDevice;
    for (auto& d : devices_) perDevice.push_back(d->cpu->ops().snapshot());
    perDevice.push_back(evalDevice_->ops().snapshot());
    return prof::mergeOpRows(perDevice);
}

void TensorStrategy::deviceLoop(int d) {
    const std::string name = "tb-tensor" + std::to_string(d);
    setThreadName(name.c_str());
    Device& dev = *devices_[static_cast<size_t>(d)];
    dev.cpu->bindThreads();
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
            if (quit_) return;
            seen = generation_;
        }
        dev.error = nullptr;
        try {
            runDevice(d, {});
        } catch (const Aborted&) {
        } catch (...) {
            dev.error = std::current_exception();
            abort();
        }
        {
            std::lock_guard lock(mutex_);
            --running_;
        }
        cv_.notify_all();
    }
}

void TensorStrategy::abort() {
    {
        std::lock_guard lock(mutex_);
        aborted_ = true;
    }
    cv_.notify_all();
}

void TensorStrategy::barrier(Device& dev) {
    const auto t0 = TensorClock::now();
    TB_PHASE(Communication);
    std::unique_lock lock(mutex_);
    if (aborted_) throw Aborted();
    const uint64_t mine = barrierGeneration_;
    if (++arrived_ == static_cast<int>(devices_.size())) {
        arrived_ = 0;
        ++barrierGeneration_;
        cv_.notify_all();
    } else {
        cv_.wait(lock, [&] { return aborted_ || barrierGeneration_ != mine; });
        if (barrierGeneration_ == mine) throw Aborted();
    }
    dev.wait += secondsSince(t0);
}

void TensorStrategy::allReduce(Device& dev, float* data, size_t count) {
    const size_t D = devices_.size();
    const size_t me = dev.index;
    {
        std::lock_guard lock(mutex_);
        published_[me] = data;
        publishedCounts_[me] = count;
    }
    barrier(dev);
    const auto t0 = TensorClock::now();
    {
        TB_PHASE(Communication);
        for (size_t j = 0; j < D; ++j)
            if (publishedCounts_[j] != count)
                throw std::logic_error("tensor all-reduce: device " + std::to_string(j) + " has " +
                                       std::to_string(publishedCounts_[j]) + " floats, device " + std::to_string(me) +
                                       " " + std::to_string(count));
        if (me == 0 && scratch_.size() < count) scratch_ = AlignedBuffer(count);
    }
    dev.comm += secondsSince(t0);
    barrier(dev);  // the scratch buffer is large enough
    const auto t1 = TensorClock::now();
    {
        TB_PHASE(Communication);
        // Device k sums its 64-byte-aligned slice of every device's buffer, in device order.
        const size_t chunk = ((count + D - 1) / D + 15) / 16 * 16;
        const size_t first = std::min(count, me * chunk), last = std::min(count, first + chunk);
        float* out = scratch_.data();
        for (size_t i = first; i < last; ++i) out[i] = published_[0][i];
        for (size_t j = 1; j < D; ++j) {
            const float* in = published_[j];
            for (size_t i = first; i < last; ++i) out[i] += in[i];
        }
    }
    dev.comm += secondsSince(t1);
    barrier(dev);
    const auto t2 = TensorClock::now();
    std::memcpy(data, scratch_.data(), count * sizeof(float));
    dev.comm += secondsSince(t2);
}

void TensorStrategy::gatherLogits(Device& dev, const Tensor& mine, Tensor& whole) {
    const int64_t rows = mine.dims()[0], width = whole.dims()[1];
    const int64_t n = dev.logitsLast - dev.logitsFirst;
    barrier(dev);  // nobody still reads the scratch buffer
    {
        std::lock_guard lock(mutex_);
        if (dev.index == 0 && scratch_.size() < static_cast<size_t>(rows * width))
            scratch_ = AlignedBuffer(static_cast<size_t>(rows * width));
    }
    barrier(dev);
    const auto t0 = TensorClock::now();
    {
        TB_PHASE(Communication);
        const float* src = static_cast<const float*>(mine.data());
        float* out = scratch_.data();
        for (int64_t r = 0; r < rows; ++r)
            std::memcpy(out + r * width + dev.logitsFirst, src + r * n, static_cast<size_t>(n) * sizeof(float));
    }
    dev.comm += secondsSince(t0);
    barrier(dev);
    const auto t1 = TensorClock::now();
    std::memcpy(whole.data(), scratch_.data(), static_cast<size_t>(rows * width) * sizeof(float));
    dev.comm += secondsSince(t1);
}

void TensorStrategy::runDevice(int d, const std::function<void()>& midpoint) {
    Device& dev = *devices_[static_cast<size_t>(d)];
    dev.loss = dev.compute = dev.comm = dev.wait = 0.0;
    const auto t0 = TensorClock::now();
    auto& layers = dev.stack.layers;
    // This device's slices of the model's parameters and state.
    const float* params = model_->params();
    const float* state = model_->state().data();
    for (const Run& r : dev.paramRuns)
        std::memcpy(dev.params.data() + r.device, params + r.model, static_cast<size_t>(r.count) * sizeof(float));
    for (const Run& r : dev.stateRuns)
        std::memcpy(dev.state.data() + r.device, state + r.model, static_cast<size_t>(r.count) * sizeof(float));

    const int64_t rows = batch_.count;
    Dims dims{rows};
    const Dims& sample = model_->sampleShape();
    dims.insert(dims.end(), sample.begin(), sample.end());
    dev.input = Tensor(Tensor::plainDesc(dims), dev.cpu->engine(), batch_.x);
    Tensor* t = &dev.input;
    {
        TB_PHASE(Forward);
        for (size_t i = 0; i < layers.size(); ++i) {
            Layer& l = *layers[i];
            l.setStepSeed(deriveSeed(stepSeed_, kSeedDropout, i));
            t = &l.forward(*t, /*training=*/true);
            if (plan_.splits[i] == TensorSplit::Rows) {
                dev.cpu->stream().wait();
                allReduce(dev, static_cast<float*>(t->data()), t->desc().get_size() / sizeof(float));
            }
        }
        dev.cpu->stream().wait();
    }
    const int64_t classes = model_->numClasses();
    Tensor* logits = t;
    if (plan_.gatherLogits) {
        if (dev.logits.empty() || dev.logits.dims()[0] != rows)
            dev.logits = Tensor(Tensor::plainDesc({rows, classes}), dev.cpu->engine());
        gatherLogits(dev, *t, dev.logits);
        logits = &dev.logits;
    }
    {
        TB_PHASE(Forward);
        if (dev.gradLogits.empty() || dev.gradLogits.dims()[0] != rows)
            dev.gradLogits = Tensor(Tensor::plainDesc({rows, classes}), dev.cpu->engine());
        dev.loss = SoftmaxCrossEntropy::compute(*logits, batch_.y, &dev.gradLogits, batch_.count).loss;
    }
    if (midpoint) {
        TB_PHASE(Input);
        midpoint();
    }
    Tensor* g = &dev.gradLogits;
    if (plan_.gatherLogits) {
        // This device's columns of the logits' gradient.
        const int64_t n = dev.logitsLast - dev.logitsFirst;
        if (dev.gradSlice.empty() || dev.gradSlice.dims()[0] != rows)
            dev.gradSlice = Tensor(Tensor::plainDesc({rows, n}), dev.cpu->engine());
        const float* src = static_cast<const float*>(dev.gradLogits.data());
        float* out = static_cast<float*>(dev.gradSlice.data());
        for (int64_t r = 0; r < rows; ++r)
            std::memcpy(out + r * n, src + r * classes + dev.logitsFirst, static_cast<size_t>(n) * sizeof(float));
        g = &dev.gradSlice;
    }
    {
        TB_PHASE(Backward);
        for (size_t i = layers.size(); i-- > 0;) {
            g = layers[i]->backward(*g);
            if (!g) break;
            if (plan_.splits[i] == TensorSplit::Columns) {
                dev.cpu->stream().wait();
                allReduce(dev, static_cast<float*>(g->data()), g->desc().get_size() / sizeof(float));
            }
        }
        dev.cpu->stream().wait();
    }
    // This device's gradients and batch norm statistics into the model's.
    float* grads = model_->grads();
    float* modelState = model_->state().data();
    for (const Run& r : dev.paramRuns)
        if (r.owned)
            std::memcpy(grads + r.model, dev.grads.data() + r.device, static_cast<size_t>(r.count) * sizeof(float));
    for (const Run& r : dev.stateRuns)
        if (r.owned)
            std::memcpy(modelState + r.model, dev.state.data() + r.device, static_cast<size_t>(r.count) * sizeof(float));
    dev.compute = std::max(0.0, secondsSince(t0) - dev.comm - dev.wait);
}

StrategyStep TensorStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                  const std::function<void()>& midpoint) {
    const auto t0 = TensorClock::now();
    {
        std::lock_guard lock(mutex_);
        batch_ = batch;
        stepSeed_ = stepSeed;
        aborted_ = false;
        arrived_ = 0;
        running_ = static_cast<int>(devices_.size()) - 1;
        ++generation_;
    }
    cv_.notify_all();
    Device& first = *devices_.front();
    first.error = nullptr;
    try {
        runDevice(0, midpoint);
    } catch (const Aborted&) {
    } catch (...) {
        first.error = std::current_exception();
        abort();
    }
    {
        TB_PHASE(Communication);
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return running_ == 0; });
    }
    for (auto& d : devices_)
        if (d->error) std::rethrow_exception(d->error);
    const double wall = secondsSince(t0);
    {
        TB_PHASE(Optimizer);
        for (const auto& [offset, count] : model_->gradientSpans()) update_(offset, count, step);
    }
    StrategyStep out;
    const double D = static_cast<double>(devices_.size());
    for (size_t d = 0; d < devices_.size(); ++d) {
        const Device& dev = *devices_[d];
        ReplicaStep r;
        r.rank = static_cast<int>(d);
        r.samples = batch.count;
        r.compute_seconds = dev.compute;
        r.comm_seconds = dev.comm;
        // Idle: blocked on the other devices, or done before the slowest.
        r.wait_seconds = std::max(dev.wait, wall - dev.compute - dev.comm);
        out.comm_seconds += r.comm_seconds / D;
        out.wait_seconds += r.wait_seconds / D;
        out.replicas.push_back(r);
    }
    out.loss = first.loss;
    return out;
}

}  // namespace trainbench::engine
