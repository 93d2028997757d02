#pragma once
// A prediction run (trainbench-cli predict): a trained model predicts every example of a data split
// through the training input pipeline and writes the predictions, recorded in the run store like a
// training run — steps (one per batch: input wait, forward, output), examples/s, time, cost at the
// device's price, and the verdict, which catches an input-bound prediction as it does a training run.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "profiler/store/runid.h"
#include "profiler/store/runstatus.h"

namespace trainbench::app {

struct PredictRequest {
    std::string model;                   // MODEL: a run of the store (app/inference/modelsource.h)
    std::string db;                      // the store the model's run is in and the prediction run goes to
    std::vector<std::string> overrides;  // --set data.*: another data source or pipeline than the run's
    std::string split = "test";          // test | train
    std::string out;                     // FILE.csv or FILE.tfrecord
    int64_t batch_size = 256;
    int threads = 0;                     // 0: the machine's cores
    std::string name;                    // empty: "predict-<model run's name>"
    const std::atomic<bool>* stop = nullptr;
    std::function<void(const std::string&)> log;
};

struct PredictOutcome {
    profiler::RunId id;
    profiler::RunStatus status = profiler::RunStatus::Failed;
    int64_t examples = 0;
    double seconds = 0.0;                // prediction wall time (input, forward, output)
    double examples_per_second = 0.0;
    double accuracy = 0.0;               // top-1 against the split's labels
    std::string message;                 // why it failed or stopped
    std::string verdict;
};

// Throws before a run exists for what makes it impossible (MODEL not found, a bad --set, data
// that cannot be opened, a bad output name); errors while predicting end the run 'failed' with the
// message, and nothing is left under `out`.
PredictOutcome runPrediction(const PredictRequest& request);

}  // namespace trainbench::app
