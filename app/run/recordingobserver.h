#pragma once
// Forwards trainer events to the store and to an optional display, drives the trace window, and
// relays stop requests.
#include <atomic>
#include <cstdint>
#include <functional>

#include "engine/train/trainobserver.h"
#include "profiler/store/runwriter.h"
#include "profiler/trace/chrometrace.h"

namespace trainbench::app {

class RecordingObserver : public engine::TrainObserver {
public:
    // writer may be null (a multi_worker task other than the chief), and so may trace.
    // afterStep, if set, runs after every step (the profiler's per-step bookkeeping).
    RecordingObserver(profiler::RunWriter* writer, engine::TrainObserver* display, const std::atomic<bool>* stop,
                      profiler::ChromeTraceWriter* trace = nullptr, int64_t traceLast = 0,
                      std::function<void(int64_t)> afterStep = {})
        : writer_(writer), display_(display), stop_(stop), trace_(trace), traceLast_(traceLast),
          afterStep_(std::move(afterStep)) {}
    void onStart(const engine::TrainPlan& plan) override;
    void onStepBegin(int64_t step) override;
    void onStepEnd(int64_t step) override;
    void onStep(const engine::StepRecord& s) override;
    void onEval(const engine::EvalRecord& e) override;
    bool stopRequested() override { return stop_ && stop_->load(std::memory_order_relaxed); }

private:
    profiler::RunWriter* writer_;
    engine::TrainObserver* display_;
    const std::atomic<bool>* stop_;
    profiler::ChromeTraceWriter* trace_;
    int64_t traceLast_;
    std::function<void(int64_t)> afterStep_;
};

}  // namespace trainbench::app
