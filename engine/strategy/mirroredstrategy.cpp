#include "engine/strategy/mirroredstrategy.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/util/rng.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

MirroredStrategy::MirroredStrategy(int replicas, int threadsPerReplica, const ModelSpec& spec, const Dims& sampleShape,
                                   int64_t numClasses, const OptimizerConfig& optimizer, uint64_t seed, double bucketMb,
                                   bool overlap) {
    if (replicas < 1) throw std::invalid_argument("mirrored needs at least one replica, got " + std::to_string(replicas));
    if (threadsPerReplica < 1)
        throw std::invalid_argument("mirrored needs at least one thread per replica, got " +
                                    std::to_string(threadsPerReplica));
    exampleSize_ = 1;
    for (int64_t d : sampleShape) exampleSize_ *= d;
    group_ = std::make_shared<SharedMemoryGroup>(replicas);
    const size_t bucketBytes = static_cast<size_t>(std::max(0.0, bucketMb) * 1024 * 1024);
    for (int r = 0; r < replicas; ++r) {
        auto rep = std::make_unique<Replica>();
        rep->device = std::make_unique<CpuDevice>(threadsPerReplica);
        rep->model = std::make_unique<Model>(spec, sampleShape, numClasses, *rep->device, seed);
        rep->optimizer = Optimizer::create(optimizer, rep->model->paramCount());
        rep->collective = std::make_unique<SharedMemoryCollective>(group_, r);
        rep->sync = std::make_unique<GradientSync>(*rep->collective, rep->model->grads(), rep->model->gradientSpans(),
                                                   bucketBytes, overlap);
        replicas_.push_back(std::move(rep));
    }
    for (int r = 1; r < replicas; ++r) workers_.emplace_back([this, r] { workerLoop(r); });
}

MirroredStrategy::~MirroredStrategy() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
}

std::string MirroredStrategy::devices() const {
    return "cpu:" + std::to_string(replicas_[0]->device->threads()) + "x" + std::to_string(replicas_.size());
}

void MirroredStrategy::workerLoop(int r) {
    const std::string name = "tb-replica" + std::to_string(r);
    setThreadName(name.c_str());
    replicas_[static_cast<size_t>(r)]->device->bindThreads();
    uint64_t seen = 0;
    for (;;) {
        Job job;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
        }
        runReplica(r, job, {});
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --running_;
        }
        cv_.notify_all();
    }
}

void MirroredStrategy::runReplica(int r, const Job& job, const std::function<void()>& midpoint) {
    Replica& rep = *replicas_[static_cast<size_t>(r)];
    rep.error = nullptr;
    bool synced = false;
    try {
        const auto t0 = Clock::now();
        const int64_t n = job.batch.count;
        const int64_t N = static_cast<int64_t>(replicas_.size());
        const int64_t lo = n * r / N, hi = n * (r + 1) / N, rows = hi - lo;
        Model& model = *rep.model;
        rep.sync->beginStep();
        rep.loss = 0.0;
        if (rows > 0) {
            // Replica 0 draws the dropout masks a single device would; the others their own.
            const uint64_t seed = r == 0 ? job.seed : deriveSeed(job.seed, kSeedReplica, static_cast<uint64_t>(r));
            Tensor& logits = model.forward(job.batch.x + lo * exampleSize_, rows, /*training=*/true, seed);
            if (midpoint) midpoint();
            if (rep.gradLogits.empty() || rep.gradLogits.dims()[0] != rows)
                rep.gradLogits = Tensor(Tensor::plainDesc({rows, model.numClasses()}), model.device().engine());
            model.device().stream().wait();
            // The gradient of the global batch's mean loss: summed over replicas, it is what one
            // device computes on the whole batch.
            rep.loss = SoftmaxCrossEntropy::compute(logits, job.batch.y + lo, &rep.gradLogits, n).loss;
            model.backward(rep.gradLogits, [&](int64_t offset, int64_t count) { rep.sync->spanReady(offset, count); });
        } else {
            // Fewer examples than replicas (a last, short batch): this one adds nothing to the sum.
            if (midpoint) midpoint();
            std::fill(model.grads(), model.grads() + model.paramCount(), 0.0f);
            rep.sync->allReady();
        }
        Optimizer& opt = *rep.optimizer;
        synced = true;
        const double waited = rep.sync->finish([&](int64_t offset, int64_t count) {
            opt.update(model.params(), model.grads(), offset, offset + count, job.step);
        });
        const double total = secondsSince(t0);
        rep.record.rank = r;
        rep.record.samples = rows;
        rep.record.compute_seconds = std::max(0.0, total - waited);
        rep.record.comm_seconds = rep.sync->commSeconds();
        rep.record.wait_seconds = rep.sync->peerWaitSeconds();
    } catch (...) {
        rep.error = std::current_exception();
        // The other replicas are reducing with this one: take part with what is left, so that none
        // of them waits for it forever. The step fails anyway (the error is rethrown in step()).
        if (!synced) {
            try {
                std::fill(rep.model->grads(), rep.model->grads() + rep.model->paramCount(), 0.0f);
                rep.sync->allReady();
                rep.sync->finish({});
            } catch (...) {
            }
        }
    }
}

StrategyStep MirroredStrategy::step(const BatchView& batch, int64_t step, uint64_t stepSeed,
                                    const std::function<void()>& midpoint) {
    const Job job{batch, step, stepSeed};
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = job;
        running_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    cv_.notify_all();
    runReplica(0, job, midpoint);
    {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return running_ == 0; });
    }
    StrategyStep out;
    double lossSum = 0.0;
    for (auto& rep : replicas_) {
        if (rep->error) std::rethrow_exception(rep->error);
        lossSum += rep->loss * static_cast<double>(rep->record.samples);
        out.comm_seconds += rep->record.comm_seconds;
        out.wait_seconds += rep->record.wait_seconds;
        out.replicas.push_back(rep->record);
    }
    const double N = static_cast<double>(replicas_.size());
    out.loss = batch.count > 0 ? lossSum / static_cast<double>(batch.count) : 0.0;
    out.comm_seconds /= N;
    out.wait_seconds /= N;
    return out;
}

}  // namespace trainbench::engine
