#pragma once
// The pipeline for data sets held in memory (IDX): tf.data's from_tensor_slices -> shuffle (the
// whole set) -> batch -> prefetch, the first three fused into one pass that scales the chosen rows
// straight into the batch. With prefetch > 0 a background thread makes the next `prefetch` batches
// while the trainer computes (running on into the next epoch, whose order is fixed by the seed), so
// the trainer's input wait is only the hand-over; with 0 the trainer makes each batch itself.
// Either way the batches and their order are the same.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/data/batcher.h"
#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/consumerpace.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

class InMemoryPipeline : public InputPipeline {
public:
    // `ds` must outlive the pipeline. prefetch >= 0: batches made ahead on a background thread.
    InMemoryPipeline(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder, uint64_t seed,
                     int64_t prefetch = 0);
    ~InMemoryPipeline() override;
    InMemoryPipeline(const InMemoryPipeline&) = delete;
    InMemoryPipeline& operator=(const InMemoryPipeline&) = delete;

    void startEpoch(int64_t epoch) override;
    BatchView next() override;
    // Without prefetch: asks for the next batch's rows while the step's backward pass runs (with it,
    // the producer is making that batch already).
    void stepMidpoint() override;
    int64_t batchesPerEpoch() const override { return batcher_.batchesPerEpoch(); }
    int64_t examplesPerEpoch() const override { return batcher_.examplesPerEpoch(); }
    int64_t sourceExamples() const override { return count_; }
    int64_t exampleSize() const override { return batcher_.exampleSize(); }
    PipelineStats stats() const override;

private:
    struct Slot {
        AlignedBuffer x;
        std::vector<int32_t> y;
        int64_t count = 0;  // 0: the end of an epoch
        int64_t epoch = 0;
    };
    void startProducer(int64_t epoch);
    void stopProducer();
    void produce(int64_t firstEpoch);

    Batcher batcher_;  // the producer's alone while it runs
    int64_t count_;
    int64_t prefetch_;
    // prefetch 0: the one batch, made on the trainer's thread.
    AlignedBuffer x_;
    std::vector<int32_t> y_;
    // prefetch > 0: prefetch + 1 slots, each free, being filled, ready or handed to the trainer.
    std::vector<Slot> slots_;
    std::deque<size_t> free_, ready_;
    size_t handed_ = SIZE_MAX;
    int64_t readyBatches_ = 0;  // ready slots holding a batch (not an epoch's end)
    // The epoch whose first batch the trainer gets next from the producer's stream, or -1 in the
    // middle of an epoch: startEpoch of any other epoch restarts the producer there.
    int64_t streamAt_ = -1;
    bool epochOver_ = false;  // the trainer has had the epoch's end and not started another
    bool stop_ = false, consumerWaiting_ = false, producerWaiting_ = false;
    std::exception_ptr error_;
    mutable std::mutex mutex_;
    std::condition_variable readyCv_, spaceCv_;
    std::thread producer_;
    ConsumerPace pace_;  // under mutex_
    // Stage counters (under mutex_): "batch" is the time spent making batches (on the producer's
    // thread with prefetch), "prefetch" the trainer's time in next() and the queue's fill.
    double seconds_ = 0.0, handSeconds_ = 0.0, fillSum_ = 0.0;
    int64_t batches_ = 0, bytes_ = 0, handedBatches_ = 0, fillSamples_ = 0;
};

// The test split of an IDX data set as floats scaled to [0, 1].
EvalSet toEvalSet(const ImageDataset& ds);

}  // namespace trainbench::engine
