#pragma once
// An input pipeline of numbered batches for the trainer tests (test_synctrainer, test_runbookkeeping):
// `batches` batches of kBatch examples of kFeatures features an epoch; every feature of batch b of
// epoch e is 100 e + b, so a test can tell which batch a step got. Labels are 0.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/data/pipeline/inputpipeline.h"

namespace trainbench::engine::testpipeline {

inline constexpr int64_t kBatch = 2, kFeatures = 4;

class NumberedPipeline final : public InputPipeline {
public:
    explicit NumberedPipeline(int64_t batches) : batches_(batches), x_(kBatch * kFeatures), y_(kBatch, 0) {}
    void startEpoch(int64_t epoch) override {
        epoch_ = epoch;
        next_ = 0;
        epochs.push_back(epoch);
    }
    BatchView next() override {
        if (next_ == batches_) return {};
        std::fill(x_.begin(), x_.end(), static_cast<float>(100 * epoch_ + next_++));
        return {x_.data(), y_.data(), kBatch};
    }
    void stepMidpoint() override { ++midpoints; }
    int64_t batchesPerEpoch() const override { return batches_; }
    int64_t examplesPerEpoch() const override { return batches_ * kBatch; }
    int64_t sourceExamples() const override { return batches_ * kBatch; }
    int64_t exampleSize() const override { return kFeatures; }
    PipelineStats stats() const override { return statsNow; }

    std::vector<int64_t> epochs;  // started, in order
    int midpoints = 0;
    PipelineStats statsNow;       // what stats() says

private:
    int64_t batches_, epoch_ = 0, next_ = 0;
    std::vector<float> x_;
    std::vector<int32_t> y_;
};

}  // namespace trainbench::engine::testpipeline
