#pragma once
// What the multi_worker integration tests share: a small MLP experiment on Fashion-MNIST with a
// step limit, the steps a run committed, and how far a job's loss curve is from a reference run's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

namespace trainbench::testing {

// `strategy` is the body of the experiment's "strategy" object ("" for a single device).
inline std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, int64_t batch,
                                   int steps, const std::string& strategy) {
    const auto path = dir / (name + ".json");
    std::ofstream f(path);
    f << "{\"name\": \"" << name << "\", \"seed\": 5, \"data\": {\"train_limit\": " << batch * steps
      << ", \"test_limit\": 500}, \"model\": {\"preset\": \"mlp\"},"
      << "\"train\": {\"batch_size\": " << batch << ", \"epochs\": 0, \"max_steps\": " << steps
      << ", \"eval_every_steps\": 0, \"eval_at_epoch_end\": false, \"threads\": 1}, \"strategy\": {" << strategy
      << "}}";
    return path.string();
}

// The run's committed steps; none while the job has not created the store yet.
inline std::vector<engine::StepRecord> stepsOf(const std::string& db, const std::string& name) {
    if (!std::filesystem::exists(db)) return {};
    try {
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun(name);
        if (!row) return {};
        return store.steps(row->id);
    } catch (const profiler::StoreError&) {
        return {};  // created but not yet set up by the chief
    }
}

// The largest relative difference between the two runs' losses, step by step (over the shorter run).
inline double worstRelativeLossDifference(const std::vector<engine::StepRecord>& steps,
                                          const std::vector<engine::StepRecord>& reference) {
    double worst = 0;
    for (size_t i = 0; i < std::min(steps.size(), reference.size()); ++i)
        worst = std::max(worst, std::abs(steps[i].loss - reference[i].loss) / reference[i].loss);
    return worst;
}

}  // namespace trainbench::testing
