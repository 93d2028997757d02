#pragma once
// Runs written into a store with steps, evaluations and prices chosen by hand, so that the tests of
// time- and cost-to-accuracy compare with figures worked out on paper.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/store/runwriter.h"

namespace trainbench::profiler::testutil {

struct HandRun {
    std::string name = "run";
    std::string config = R"({"model":{"preset":"mlp"}})";
    std::vector<double> stepSeconds;                      // steps 1, 2, ...
    std::vector<std::pair<int64_t, double>> evals;        // (step, test accuracy)
    double evalSeconds = 0.25;                            // each evaluation's own time
    std::optional<double> evalWallSeconds;                // recorded as every evaluation's training time
                                                          // (default: the steps' sum so far, as runs do)
    std::optional<double> pricePerDeviceHour;
    std::optional<double> hostPricePerHour;
    int64_t devices = 1;
    std::string clock = "wall";
    std::optional<int64_t> warmStartRun;
    std::optional<std::string> warmStartStep;             // run attribute warm_start.step
    int64_t firstStep = 1;
    int64_t globalBatch = 128;
};

// Writes the run's steps and evaluations and leaves it running (committed, the writer still open).
inline std::unique_ptr<RunWriter> startRun(const std::string& path, const HandRun& h) {
    RunSpec spec;
    spec.name = h.name;
    spec.config_json = h.config;
    spec.clock = h.clock;
    spec.device_count = h.devices;
    spec.price_per_device_hour = h.pricePerDeviceHour;
    spec.host_price_per_hour = h.hostPricePerHour;
    spec.warm_start_run = h.warmStartRun;
    spec.global_batch = h.globalBatch;
    auto w = std::make_unique<RunWriter>(path, spec);
    RunWriter& writer = *w;
    if (h.warmStartStep) writer.attributes({{"warm_start.step", *h.warmStartStep}});
    double wall = 0.0;
    size_t nextEval = 0;
    for (size_t i = 0; i < h.stepSeconds.size(); ++i) {
        engine::StepRecord s;
        s.step = h.firstStep + static_cast<int64_t>(i);
        s.step_seconds = h.stepSeconds[i];
        wall += s.step_seconds;
        s.wall_seconds = wall;
        s.samples = 128;
        s.loss = 1.0;
        writer.step(s);
        while (nextEval < h.evals.size() && h.evals[nextEval].first == s.step) {
            engine::EvalRecord e;
            e.step = s.step;
            e.accuracy = h.evals[nextEval].second;
            e.eval_seconds = h.evalSeconds;
            e.wall_seconds = h.evalWallSeconds.value_or(wall);
            e.samples = 1000;
            writer.eval(e);
            ++nextEval;
        }
    }
    // Evaluations after the last recorded step (a doctored store missing steps).
    for (; nextEval < h.evals.size(); ++nextEval) {
        engine::EvalRecord e;
        e.step = h.evals[nextEval].first;
        e.accuracy = h.evals[nextEval].second;
        e.eval_seconds = h.evalSeconds;
        e.wall_seconds = h.evalWallSeconds.value_or(wall);
        e.samples = 1000;
        writer.eval(e);
    }
    writer.flush();
    return w;
}

// The same, finished as completed.
inline RunId writeRun(const std::string& path, const HandRun& h) {
    auto writer = startRun(path, h);
    engine::RunSummary summary;
    summary.steps = static_cast<int64_t>(h.stepSeconds.size());
    for (double s : h.stepSeconds) summary.train_seconds += s;
    writer->finish(RunStatus::Completed, summary);
    return writer->runId();
}

// A configuration's run: `steps` steps of `stepSeconds`, reaching `accuracy` after the last.
inline HandRun configRun(const std::string& model, int seed, int steps, double stepSeconds, double accuracy,
                         std::optional<double> pricePerHour, const std::string& clock = "wall") {
    HandRun h;
    h.name = model + "-seed" + std::to_string(seed);
    h.config = R"({"seed":)" + std::to_string(seed) + R"(,"model":{"preset":")" + model + "\"}}";
    h.stepSeconds.assign(static_cast<size_t>(steps), stepSeconds);
    h.evals = {{steps, accuracy}};
    h.pricePerDeviceHour = pricePerHour;
    h.clock = clock;
    return h;
}

}  // namespace trainbench::profiler::testutil
