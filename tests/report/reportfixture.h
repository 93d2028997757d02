#pragma once
// Run stores for the report tests, recorded with the real RunWriter: steps with a step-time
// breakdown, evaluations, a summary, attributes (memory.*), per-op statistics, and a saved verdict
// with its evidence, timeline and actions.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "tests/profiler/storetestutil.h"

namespace trainbench::profiler::testutil {

// Whether a report's text contains `what`.
inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

struct RunFixture {
    std::string name = "alpha";
    nlohmann::json config = {{"name", "alpha"},
                             {"model", {{"preset", "mlp"}}},
                             {"train", {{"batch_size", 64}, {"max_steps", 1000}}},
                             {"strategy", {{"type", "single"}, {"replicas", 1}}}};
    int64_t replicas = 1;
    int64_t steps = 1000;
    int64_t evalEvery = 100;
    double finalAccuracy = 0.8731;
    double throughput = 5120.0;
    bool classified = true;     // save a verdict, op stats and memory attributes
    RunStatus status = RunStatus::Completed;
    std::string message;        // for a failed run
    std::optional<double> pricePerHour;  // one device at this price: the run gets a cost when it ends
};

inline engine::StepRecord fixtureStep(int64_t step, int64_t replicas) {
    engine::StepRecord s;
    s.step = step;
    s.epoch = 0;
    s.loss = 2.0 / std::sqrt(static_cast<double>(step)) + 0.05 * std::sin(static_cast<double>(step));
    s.input_seconds = 0.0030;
    s.forward_seconds = 0.0020;
    s.backward_seconds = 0.0035;
    s.optimizer_seconds = 0.0005;
    s.exposed_comm_seconds = replicas > 1 ? 0.0015 : 0.0;
    s.other_seconds = 0.0003;
    s.step_seconds = s.input_seconds + s.forward_seconds + s.backward_seconds + s.optimizer_seconds +
                     s.exposed_comm_seconds + s.other_seconds;
    s.samples = 64;
    s.samples_per_second = 64.0 / s.step_seconds;
    s.learning_rate = 0.001;
    s.wall_seconds = static_cast<double>(step) * s.step_seconds;
    return s;
}

inline Verdict fixtureVerdict(int64_t steps) {
    Verdict v;
    v.verdict = {BoundKind::Input, Severity::High, "Input-bound: 29.7 % of step time waiting for input",
                 {{"input_fraction", 29.7, "%", "29.7 % of step time waiting for input (>= 20 % is highly input-bound)"},
                  {"step_ms", 10.1, "ms", "10.1 ms per step on average over steps 21-" + std::to_string(steps)}},
                 21, steps};
    v.findings.push_back({BoundKind::Compute, Severity::Moderate, "Compute-bound: 61.0 % of op time right of the ridge",
                          {{"compute_fraction", 61.0, "%", "61.0 % of op time in ops right of the ridge"}}, 21, steps});
    v.windows.push_back({BoundKind::Balanced, Severity::Low, "Warm-up: nothing stands out", {}, 1, 20});
    v.windows.push_back({BoundKind::Input, Severity::High, "Highly input-bound: 29.7 % waiting for input", {}, 21, steps});
    v.actions.push_back({BoundKind::Input, "Prefetch batches on a background thread",
                         {{"data.pipeline.prefetch", 0, 2}},
                         "the input wait hides behind the step", 1.42, "input-bound: prefetch (domain table)"});
    v.actions.push_back({BoundKind::Compute, "Run on a faster processor (no experiment change)", {},
                         "a newer processor raises the compute roof", std::nullopt, "compute-bound: faster hardware"});
    return v;
}

// Records one run into the store at `db` and returns its id.
inline RunId recordFixtureRun(const std::string& db, const RunFixture& f) {
    RunSpec spec;
    spec.name = f.name;
    spec.config_json = f.config.dump();
    spec.strategy = f.replicas > 1 ? "mirrored" : "single";
    spec.devices = f.replicas > 1 ? "cpu:1x" + std::to_string(f.replicas) : "cpu:2";
    spec.replicas = f.replicas;
    spec.global_batch = 64;
    spec.dataset = "fashion-mnist";
    spec.model = "mlp";
    spec.target_accuracy = 0.85;
    if (f.pricePerHour) {
        spec.device_count = 1;
        spec.price_per_device_hour = f.pricePerHour;
    }
    RunId id;
    {
        RunWriter w(db, spec);
        id = w.runId();
        double best = 0;
        int64_t evaluations = 0;
        std::optional<double> timeToTarget;
        for (int64_t s = 1; s <= f.steps; ++s) {
            const engine::StepRecord step = fixtureStep(s, f.replicas);
            w.step(step);
            if (s % f.evalEvery == 0 || s == f.steps) {
                engine::EvalRecord e;
                e.step = s;
                e.accuracy = s == f.steps ? f.finalAccuracy
                                          : f.finalAccuracy * (1.0 - 0.5 / static_cast<double>(s / f.evalEvery + 1));
                e.loss = 1.0 - e.accuracy;
                e.samples = 10000;
                e.wall_seconds = step.wall_seconds;
                w.eval(e);
                best = std::max(best, e.accuracy);
                ++evaluations;
                if (!timeToTarget && e.accuracy >= 0.85) timeToTarget = step.wall_seconds;
            }
        }
        if (f.classified) {
            w.attributes({{"memory.params_bytes", "2143272"}, {"memory.device_source", "host RAM"},
                          {"memory.peak_rss_bytes", "119898112"}, {"input.prefetch", "0"},
                          {"ops.first_step", "21"}});
            engine::prof::OpRow fwd{"inner_product_forward", "src 64x784, weights 512x784, dst 64x512", f.steps, 0.75,
                                    2.0 * 64 * 784 * 512, 4.0 * (64 * 784 + 512 * 784 + 64 * 512)};
            engine::prof::OpRow upd{"adam_update", "401920 parameters", f.steps, 0.25, 401920.0 * 10, 401920.0 * 4 * 7};
            w.opStats(0, {fwd, upd});
        }
        engine::RunSummary sum;
        sum.steps = f.steps;
        sum.epochs_completed = 1;
        sum.final_loss = fixtureStep(f.steps, f.replicas).loss;
        sum.evaluations = evaluations;
        sum.final_accuracy = f.finalAccuracy;
        sum.best_accuracy = best;
        sum.time_to_target = timeToTarget;
        sum.train_seconds = fixtureStep(f.steps, f.replicas).wall_seconds;
        sum.eval_seconds = 0.5;
        sum.throughput = f.throughput;
        sum.stop_reason = engine::StopReason::MaxSteps;
        w.finish(f.status, sum, f.message);
    }
    if (f.classified) RunStore::open(db).saveVerdict(id, fixtureVerdict(f.steps));
    return id;
}

// A second run of the same experiment with other settings: batch size, strategy, replicas, a new key.
inline RunFixture mirroredFixture() {
    RunFixture f;
    f.name = "beta";
    f.config = {{"name", "beta"},
                {"model", {{"preset", "mlp"}}},
                {"train", {{"batch_size", 128}, {"max_steps", 1000}}},
                {"strategy", {{"type", "mirrored"}, {"replicas", 2}, {"bucket_mb", 4}}}};
    f.replicas = 2;
    f.finalAccuracy = 0.8614;
    f.throughput = 8704.0;
    return f;
}

inline std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// Pages of a PDF as Qt writes them: one "/Type /Page" object per page (and one "/Type /Pages").
inline size_t pdfPages(const std::string& pdf) {
    const std::string key = "/Type /Page";
    size_t n = 0;
    for (size_t at = pdf.find(key); at != std::string::npos; at = pdf.find(key, at + key.size()))
        n += at + key.size() < pdf.size() && pdf[at + key.size()] != 's';
    return n;
}

}  // namespace trainbench::profiler::testutil
