// `trainbench-bench step-loop`: W1's training loop as the CLI runs it, timed from the outside (the
// child process of `instrumentation-cost`, which builds it with and without profiling).
#include "bench/steploop.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "engine/data/pipeline/datasource.h"
#include "engine/device/cpudevice.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/instrument/instrument.h"
#include "engine/train/trainer.h"
#include "profiler/trace/chrometrace.h"

namespace trainbench::bench {

namespace {

using namespace trainbench::engine;

// Keeps what the figures need and nothing else; with a trace, drives its window and drains the
// engine's buffers after every step, as a run with `--trace` over all its steps would.
class TimingObserver final : public TrainObserver {
public:
    TimingObserver(int64_t steps, profiler::ChromeTraceWriter* trace) : trace_(trace) {
        periods_.reserve(static_cast<size_t>(steps));
        stepSeconds_.reserve(static_cast<size_t>(steps));
        breakdown_.reserve(static_cast<size_t>(steps));
    }
    void onStart(const TrainPlan& /*plan*/) override {
        if (trace_) trace_->beginStep(1);
        last_ = Clock::now();
    }
    void onStep(const StepRecord& r) override {
        // The loop's period: everything between two records (the step, the trainer's bookkeeping
        // around it, and the drain of the previous step's events) — what the instrumentation can
        // cost, not only what lands inside step_seconds.
        const auto now = Clock::now();
        periods_.push_back(std::chrono::duration<double>(now - last_).count());
        last_ = now;
        stepSeconds_.push_back(r.step_seconds);
        breakdown_.push_back(r.forward_seconds + r.backward_seconds + r.optimizer_seconds + r.exposed_comm_seconds);
        if (trace_) {
            trace_->endStep(r.step);
            prof::drainTrace(*trace_);
            trace_->beginStep(r.step + 1);
        }
    }
    const std::vector<double>& periods() const { return periods_; }
    const std::vector<double>& stepSeconds() const { return stepSeconds_; }
    const std::vector<double>& breakdown() const { return breakdown_; }

private:
    profiler::ChromeTraceWriter* trace_;
    Clock::time_point last_;
    std::vector<double> periods_, stepSeconds_, breakdown_;
};

std::vector<double> after(const std::vector<double>& v, int64_t skip) {
    return {v.begin() + std::min<int64_t>(skip, static_cast<int64_t>(v.size())), v.end()};
}

// The p-th fraction of a set of timings: p = 0.1, the steps no hiccup of the machine slowed.
double mean(const std::vector<double>& v) {
    double sum = 0.0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

int stepLoop(const StepLoopOptions& o) {
    if (o.trace && !prof::kEnabled) {
        std::fprintf(stderr, "step-loop --trace: this binary was built with TRAINBENCH_PROFILING=OFF (no trace)\n");
        return 2;
    }
    if (o.steps <= o.skip) {
        std::fprintf(stderr, "step-loop: --steps (%lld) must exceed --skip (%lld)\n", static_cast<long long>(o.steps),
                     static_cast<long long>(o.skip));
        return 2;
    }
    // experiments/fmnist-mlp.json with train.max_steps = steps, train.epochs = 0 and no evaluation.
    TrainConfig train;
    train.batch_size = 128;
    train.epochs = 0;
    train.max_steps = o.steps;
    train.eval_every_steps = 0;
    train.eval_at_epoch_end = false;
    train.threads = o.threads;
    train.seed = 42;
    const DataConfig data;  // Fashion-MNIST IDX from Debian's package, shuffled, last batch kept
    TrainingData d = openTrainingData(data, train.batch_size, train.seed);
    ModelSpec spec;
    spec.preset = "mlp";
    spec.layers = presetLayers("mlp");
    CpuDevice device(o.threads);
    Model model(spec, {d.channels, d.height, d.width}, d.num_classes, device, train.seed);
    OptimizerConfig adam;  // Adam, lr 1e-3, β 0.9/0.999, ε 1e-7
    std::unique_ptr<Optimizer> optimizer = Optimizer::create(adam, model.paramCount());
    Trainer trainer(model, *optimizer, *d.train, d.test, train);

    std::optional<profiler::ChromeTraceWriter> trace;
    if (o.trace) {
        profiler::ChromeTraceOptions to;
        to.firstStep = 1;
        to.lastStep = o.steps;
        to.maxEvents = std::max<size_t>(to.maxEvents, static_cast<size_t>(o.steps) * 256);  // never cut
        trace.emplace(to);
    }
    TimingObserver observer(o.steps, trace ? &*trace : nullptr);
    const auto t0 = Clock::now();
    const RunSummary summary = trainer.run(observer);
    const double wall = secondsSince(t0);

    nlohmann::json out = {{"bench", "step-loop"}, {"workload", "w1"}, {"profiling", prof::kEnabled},
                          {"trace", o.trace}, {"threads", o.threads}, {"steps", summary.steps},
                          {"timed_steps", summary.steps - o.skip}, {"wall_s", wall}};
    const std::vector<double> periods = after(observer.periods(), o.skip), steps = after(observer.stepSeconds(), o.skip);
    out["period_ms_median"] = median(periods) * 1e3;
    out["period_ms_mean"] = mean(periods) * 1e3;
    out["period_ms_p10"] = percentile(periods, 0.1) * 1e3;
    out["step_ms_median"] = median(steps) * 1e3;
    out["step_ms_mean"] = mean(steps) * 1e3;
    out["samples_per_s"] = summary.throughput;  // the trainer's steady-state figure (step_seconds)
    // Forward + backward + optimizer (+ exposed exchange) the trainer recorded: 0 when compiled out.
    out["breakdown_ms_mean"] = mean(after(observer.breakdown(), o.skip)) * 1e3;
    if (trace) {
        prof::drainTrace(*trace);
        const profiler::ChromeTraceStats st = trace->stats();
        const std::string path =
            !o.traceOut.empty() ? o.traceOut
                                : (std::filesystem::temp_directory_path() /
                                   ("trainbench-step-loop-" + std::to_string(getpid()) + ".trace.json"))
                                      .string();
        const auto w0 = Clock::now();
        trace->write(path);
        out["trace_events"] = st.events;
        out["trace_dropped"] = st.droppedByCap + st.droppedByRing;
        out["trace_write_s"] = secondsSince(w0);
        out["trace_bytes"] = std::filesystem::file_size(path);
        if (o.traceOut.empty()) std::filesystem::remove(path);
        else out["trace_file"] = path;
    }
    std::printf("W1 training loop, %d thread(s), %lld steps (%lld timed), profiling %s%s: period median %.3f ms, "
                "mean %.3f ms (%.0f samples/s)\n",
                o.threads, static_cast<long long>(summary.steps), static_cast<long long>(summary.steps - o.skip),
                prof::kEnabled ? "compiled in" : "compiled out", o.trace ? ", tracing every step" : "",
                out["period_ms_median"].get<double>(), out["period_ms_mean"].get<double>(), summary.throughput);
    std::printf("%s\n", out.dump().c_str());
    return 0;
}

}  // namespace trainbench::bench
