#include "engine/data/pipeline/inmemorypipeline.h"

#include <omp.h>

#include <algorithm>
#include <chrono>

#include "engine/instrument/instrument.h"
#include "engine/util/threadname.h"
#include "engine/util/vectorkernels.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

InMemoryPipeline::InMemoryPipeline(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder,
                                   uint64_t seed, int64_t prefetch)
    : batcher_(ds, batch_size, shuffle, drop_remainder, seed), count_(ds.count), prefetch_(std::max<int64_t>(0, prefetch)) {
    if (prefetch_ == 0) {
        x_ = AlignedBuffer(static_cast<size_t>(batch_size * ds.exampleSize()));
        y_.resize(static_cast<size_t>(batch_size));
        return;
    }
    // The slots' buffers are allocated by the producer as it first fills them.
    slots_.resize(static_cast<size_t>(prefetch_ + 1));
    for (size_t i = 0; i < slots_.size(); ++i) free_.push_back(i);
}

InMemoryPipeline::~InMemoryPipeline() { stopProducer(); }

void InMemoryPipeline::startEpoch(int64_t epoch) {
    if (prefetch_ == 0) {
        batcher_.startEpoch(epoch);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        epochOver_ = false;
        if (producer_.joinable() && streamAt_ == epoch) return;  // the producer is on it already
    }
    stopProducer();
    startProducer(epoch);
}

void InMemoryPipeline::startProducer(int64_t epoch) {
    streamAt_ = epoch;
    producer_ = std::thread([this, epoch] { produce(epoch); });
}

void InMemoryPipeline::stopProducer() {
    if (!producer_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    spaceCv_.notify_all();
    producer_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    free_.clear();
    ready_.clear();
    for (size_t i = 0; i < slots_.size(); ++i) free_.push_back(i);
    handed_ = SIZE_MAX;
    readyBatches_ = 0;
    streamAt_ = -1;
    epochOver_ = false;
    error_ = nullptr;
}

void InMemoryPipeline::produce(int64_t firstEpoch) {
    setThreadName("tb-prefetch");
    // One thread: the batch is made while the trainer's threads compute, not instead of them.
    omp_set_num_threads(1);
    try {
        for (int64_t epoch = firstEpoch;; ++epoch) {
            batcher_.startEpoch(epoch);
            for (;;) {
                size_t index = 0;
                {
                    std::unique_lock<std::mutex> lock(mutex_);
                    // A slot to fill, and (for a batch) fewer than `prefetch` batches ready.
                    auto room = [&] { return stop_ || (!free_.empty() && readyBatches_ < prefetch_); };
                    // The trainer does not wake this thread when it takes a batch (consumerpace.h).
                    producerWaiting_ = true;
                    while (!room()) spaceCv_.wait_for(lock, pace_.poll());
                    producerWaiting_ = false;
                    if (stop_) return;
                    index = free_.front();
                    free_.pop_front();
                }
                Slot& slot = slots_[index];
                if (slot.x.size() == 0) {
                    slot.x = AlignedBuffer(static_cast<size_t>(batcher_.batchSize() * batcher_.exampleSize()));
                    slot.y.resize(static_cast<size_t>(batcher_.batchSize()));
                }
                const auto t0 = Clock::now();
                slot.count = batcher_.next(slot.x.data(), slot.y.data());
                slot.epoch = epoch;
                const double busy = secondsSince(t0);
                const bool end = slot.count == 0;
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                    seconds_ += busy;
                    if (!end) {
                        ++batches_;
                        bytes_ += slot.count * batcher_.exampleSize() * static_cast<int64_t>(sizeof(float));
                        ++readyBatches_;
                    }
                    ready_.push_back(index);
                    // Wake the trainer only if it waits (a wake per batch would bounce the core).
                    if (consumerWaiting_) readyCv_.notify_one();
                }
                if (end) break;
            }
        }
    } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::current_exception();
        readyCv_.notify_all();
    }
}

BatchView InMemoryPipeline::next() {
    const auto t0 = Clock::now();
    if (prefetch_ == 0) {
        const int64_t n = batcher_.next(x_.data(), y_.data());
        std::lock_guard<std::mutex> lock(mutex_);
        seconds_ += secondsSince(t0);
        if (n > 0) {
            ++batches_;
            bytes_ += n * batcher_.exampleSize() * static_cast<int64_t>(sizeof(float));
        }
        return {x_.data(), y_.data(), n};
    }
    if (!producer_.joinable()) startProducer(batcher_.epoch());  // next() before any startEpoch
    std::unique_lock<std::mutex> lock(mutex_);
    if (epochOver_) return {};  // until the next epoch is started, as without prefetch
    if (handed_ != SIZE_MAX) {
        free_.push_back(handed_);
        handed_ = SIZE_MAX;
    }
    pace_.taken(t0);
    fillSum_ += static_cast<double>(std::min(readyBatches_, prefetch_)) / static_cast<double>(prefetch_);
    ++fillSamples_;
    static constexpr prof::ZoneSite kReady{"prefetch queue (batches ready)", "pipeline"};
    prof::counter(&kReady, static_cast<double>(readyBatches_));
    if (ready_.empty() && !error_) {
        if (producerWaiting_) spaceCv_.notify_one();  // waiting anyway: the wake costs no step time
        consumerWaiting_ = true;
        readyCv_.wait(lock, [&] { return !ready_.empty() || error_; });
        consumerWaiting_ = false;
    }
    if (ready_.empty()) std::rethrow_exception(error_);
    handed_ = ready_.front();
    ready_.pop_front();
    Slot& slot = slots_[handed_];
    BatchView view;
    if (slot.count > 0) {
        --readyBatches_;
        streamAt_ = -1;
        view = {slot.x.data(), slot.y.data(), slot.count};
        ++handedBatches_;
    } else {
        streamAt_ = slot.epoch + 1;  // the producer has started the next epoch
        epochOver_ = true;
    }
    handSeconds_ += secondsSince(t0);
    return view;
}

void InMemoryPipeline::stepMidpoint() {
    if (prefetch_ == 0) batcher_.prefetchNext();
}

PipelineStats InMemoryPipeline::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    PipelineStats s;
    StageStats b;
    b.name = "batch";
    b.seconds = seconds_;
    b.items = batches_;
    b.bytes = bytes_;
    s.stages.push_back(b);
    if (prefetch_ > 0) {
        StageStats p;
        p.name = "prefetch";
        p.seconds = handSeconds_;
        p.items = handedBatches_;
        p.fill_sum = fillSum_;
        p.fill_samples = fillSamples_;
        p.capacity = prefetch_;
        s.stages.push_back(p);
    }
    return s;
}

EvalSet toEvalSet(const ImageDataset& ds) {
    EvalSet e;
    e.count = ds.count;
    e.channels = ds.channels;
    e.height = ds.height;
    e.width = ds.width;
    e.num_classes = ds.num_classes;
    e.x.resize(ds.pixels.size());
    kernels::scaleBytes(ds.pixels.data(), e.x.data(), ds.pixels.size(), 1.0f / 255.0f);
    e.labels = ds.labels;
    e.source = ds.images_path;
    return e;
}

}  // namespace trainbench::engine
