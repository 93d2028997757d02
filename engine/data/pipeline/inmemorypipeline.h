#pragma once
// The pipeline for data sets held in memory (IDX): tf.data's from_tensor_slices -> shuffle (the
// whole set) -> batch, fused into one pass that scales the chosen rows straight into the batch.
#include "engine/data/batcher.h"
#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

class InMemoryPipeline : public InputPipeline {
public:
    // `ds` must outlive the pipeline.
    InMemoryPipeline(const ImageDataset& ds, int64_t batch_size, bool shuffle, bool drop_remainder, uint64_t seed);
    void startEpoch(int64_t epoch) override { batcher_.startEpoch(epoch); }
    BatchView next() override;
    // Asks for the next batch's rows while the step's backward pass runs.
    void stepMidpoint() override { batcher_.prefetchNext(); }
    int64_t batchesPerEpoch() const override { return batcher_.batchesPerEpoch(); }
    int64_t examplesPerEpoch() const override { return batcher_.examplesPerEpoch(); }
    int64_t sourceExamples() const override { return count_; }
    int64_t exampleSize() const override { return batcher_.exampleSize(); }
    PipelineStats stats() const override;

private:
    Batcher batcher_;
    int64_t count_;
    AlignedBuffer x_;
    std::vector<int32_t> y_;
    double seconds_ = 0.0;
    int64_t batches_ = 0, bytes_ = 0;
};

// The test split of an IDX data set as floats scaled to [0, 1].
EvalSet toEvalSet(const ImageDataset& ds);

}  // namespace trainbench::engine
