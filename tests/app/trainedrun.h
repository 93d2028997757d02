#pragma once
// A short real training run on Fashion-MNIST that keeps its checkpoint: the model the inference
// tests serve, predict and quantize. Accuracy is beside the point (40 steps: about 75-80 %).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/experiment/experiment.h"
#include "app/run/runner.h"

namespace trainbench::app::testing {

inline profiler::RunId trainBriefly(const std::filesystem::path& dir, const std::string& db, const std::string& preset) {
    const std::string text = R"({"name": "src-)" + preset + R"(", "seed": 7,
        "data": {"dataset": "fashion-mnist", "path": "/usr/share/datasets/fashion-mnist"},
        "model": {"preset": ")" + preset + R"("},
        "train": {"batch_size": 64, "epochs": 1, "max_steps": 40, "eval_every_steps": 0,
                  "eval_at_epoch_end": true, "threads": 1, "checkpoint_at_end": true,
                  "checkpoint_path": ")" + (dir / (preset + ".ckpt")).string() + R"("}})";
    RunRequest request;
    request.experiment = parseExperiment(text, (dir / "x.json").string());
    request.dbPath = db;
    const RunOutcome outcome = runExperiment(request);
    EXPECT_EQ(outcome.status, profiler::RunStatus::Completed) << outcome.message;
    return outcome.id;
}

}  // namespace trainbench::app::testing
