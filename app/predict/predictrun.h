#pragma once
// A prediction run (trainbench-cli predict): a trained model predicts every example of a data split
// through the training input pipeline and writes the predictions, recorded in the run store like a
// training run — steps (one per batch: input wait, forward, output), examples/s, time, cost at the
// device's price, and the verdict, which catches an input-bound prediction as it does a training run.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/experiment/experiment.h"
#include "profiler/store/runid.h"
#include "profiler/store/runstatus.h"

namespace trainbench::app {

struct PredictRequest {
    std::string model;                   // MODEL: a run of the store or an ONNX file (app/inference/modelsource.h)
    std::string db;                      // the store the model's run is in and the prediction run goes to
    std::vector<std::string> overrides;  // --set data.*: another data source or pipeline than the run's;
                                         // for an ONNX file (which has no data) data.dataset at least
    std::string split = "test";          // test | train
    std::string out;                     // FILE.csv or FILE.tfrecord
    int64_t batch_size = 256;
    int threads = 0;                     // 0: the machine's cores
    std::string name;                    // empty: "predict-<model run's name>"
    // Replica processes, each predicting a shard of the input into FILE-0000i-of-0000N.EXT with
    // threads / replicas threads; their steps are recorded in this process's run.
    int replicas = 1;
    // Set in a replica process (--replica I/N): predict shard `replica` of `replicas`, record no run,
    // write a line per batch to standard output for the parent (replicaprotocol below).
    int replica = -1;
    std::string program = "/proc/self/exe";           // what the replicas run
    std::chrono::seconds replica_silence{120};        // a replica silent this long is taken for hung
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

// The experiment a prediction with the ONNX model `file` runs and records (runs.config_json): the
// defaults with `overrides` (--set data.*, train.batch_size) on top, and {"onnx": file} as its model.
// ExperimentError for a bad override.
Experiment onnxPredictionExperiment(const std::string& file, const std::vector<std::string>& overrides);

// The file replica `index` of `count` writes for `out`: predictions.csv -> predictions-00001-of-00004.csv.
std::string replicaOutput(const std::string& out, int index, int count);

}  // namespace trainbench::app
