#pragma once
// What the multi-process integration tests share: a small MLP experiment on Fashion-MNIST with a
// step limit, the steps a run committed, how far a job's loss curve is from a reference run's, and
// the process of one task of a running job.
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"

namespace trainbench::testing {

// `strategy` is the body of the experiment's "strategy" object ("" for a single device).
// `evalEvery`: evaluate on the test set every so many steps (0: never), on its first `testLimit` examples.
inline std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, int64_t batch,
                                   int steps, const std::string& strategy, int evalEvery = 0, int testLimit = 500) {
    const auto path = dir / (name + ".json");
    std::ofstream f(path);
    f << "{\"name\": \"" << name << "\", \"seed\": 5, \"data\": {\"train_limit\": " << batch * steps
      << ", \"test_limit\": " << testLimit << "}, \"model\": {\"preset\": \"mlp\"},"
      << "\"train\": {\"batch_size\": " << batch << ", \"epochs\": 0, \"max_steps\": " << steps
      << ", \"eval_every_steps\": " << evalEvery << ", \"eval_at_epoch_end\": false, \"threads\": 1}, \"strategy\": {" << strategy
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

// The process of the job training `experiment` whose TF_CONFIG names the task `type` `index`
// (worker 0 of a multi_worker job is rank 1), once the run has committed `minSteps` steps; -1 if
// that does not happen within a minute.
inline pid_t taskOnceTrained(const std::string& db, const std::string& name, const std::string& experiment,
                             const std::string& type, int index, size_t minSteps, std::chrono::milliseconds poll) {
    const std::string task = "\"task\":{\"index\":" + std::to_string(index) + ",\"type\":\"" + type + "\"}";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(poll);
        if (stepsOf(db, name).size() < minSteps) continue;
        for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
            std::ifstream env(entry.path() / "environ");
            const std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
            if (all.find(task) == std::string::npos) continue;
            std::ifstream cmd(entry.path() / "cmdline");
            const std::string cl((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
            if (cl.find(experiment) != std::string::npos) return std::stoi(entry.path().filename().string());
        }
    }
    return -1;
}

}  // namespace trainbench::testing
