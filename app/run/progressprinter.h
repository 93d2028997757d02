#pragma once
// The live progress line of `trainbench-cli run` on a terminal (epoch, step, loss, accuracy,
// samples/s, ETA), rewritten in place a few times a second; plain lines per evaluation otherwise.
#include <chrono>
#include <cstdio>
#include <string>

#include "engine/train/trainobserver.h"

namespace trainbench::app {

class ProgressPrinter : public engine::TrainObserver {
public:
    // out: where to print (stderr by default, so stdout stays clean for results); interactive:
    // rewrite one line with '\r' (a terminal) or print one line per evaluation (a pipe or a log).
    ProgressPrinter(std::FILE* out, bool interactive, int64_t epochs);

    void onStart(const engine::TrainPlan& plan) override;
    void onStep(const engine::StepRecord& step) override;
    void onEval(const engine::EvalRecord& eval) override;
    void finish();  // ends the in-place line

private:
    void draw(bool force);

    std::FILE* out_;
    bool interactive_;
    int64_t epochs_;
    engine::TrainPlan plan_;
    engine::StepRecord last_;
    double lastAccuracy_ = -1.0;
    double emaRate_ = 0.0;  // smoothed samples/s for the ETA
    std::chrono::steady_clock::time_point lastDraw_{};
    bool drawn_ = false;
};

}  // namespace trainbench::app
