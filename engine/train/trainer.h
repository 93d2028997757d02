#pragma once
// The single-device training loop: epochs or a step limit, periodic evaluation on the test set,
// early stop at a target accuracy, with time-to-target measured on the training clock (evaluations
// excluded, as DAWNBench does).
#include <vector>

#include "engine/data/batcher.h"
#include "engine/data/dataconfig.h"
#include "engine/data/imagedataset.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/train/records.h"
#include "engine/train/trainconfig.h"
#include "engine/train/trainobserver.h"

namespace trainbench::engine {

class Trainer {
public:
    Trainer(Model& model, Optimizer& optimizer, const ImageDataset& train, const ImageDataset& test,
            const TrainConfig& config, const DataConfig& data);

    RunSummary run(TrainObserver& observer);
    // Loss and accuracy of the current parameters on the test set.
    EvalRecord evaluate(int64_t step, int64_t epoch);
    TrainPlan plan() const;

    // Steps at the start of a run left out of the steady-state throughput (warm-up, first plans).
    static constexpr int64_t kWarmupSteps = 20;

private:
    Model& model_;
    Optimizer& optimizer_;
    const ImageDataset& train_;
    const ImageDataset& test_;
    TrainConfig config_;
    Batcher batcher_;
    AlignedBuffer x_;
    std::vector<int32_t> y_;
    Tensor gradLogits_;
    AlignedBuffer evalX_;
};

}  // namespace trainbench::engine
