#pragma once
// Shared by the classifier's tests: recorded-step fixtures (tests/data/verdict/*.json), runs built
// from one step shape, op rows around a ridge, and a large run for the benchmark.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/verdict/verdict.h"

namespace trainbench::profiler::testutil {

// One step's phases; input + forward + backward + optimizer + exposed_comm + other = step_seconds.
struct StepShape {
    double input = 0.0;
    double compute = 0.1;  // forward + backward + optimizer (split 35/55/10)
    double exposed_comm = 0.0;
    double other = 0.0;
    double eval = 0.0;
    double checkpoint = 0.0;
    double comm = 0.0;
    double wait = 0.0;
};

inline StepSample makeSample(int64_t step, const StepShape& s, int64_t samples = 128) {
    StepSample r;
    r.step = step;
    r.samples = samples;
    r.input_seconds = s.input;
    r.forward_seconds = s.compute * 0.35;
    r.backward_seconds = s.compute * 0.55;
    r.optimizer_seconds = s.compute * 0.10;
    r.exposed_comm_seconds = s.exposed_comm;
    r.other_seconds = s.other;
    r.step_seconds = s.input + s.compute + s.exposed_comm + s.other;
    r.eval_seconds = s.eval;
    r.checkpoint_seconds = s.checkpoint;
    r.comm_seconds = s.comm;
    r.wait_seconds = s.wait;
    return r;
}

// `n` steps of the same shape, steps numbered from 1; a streaming single-device experiment.
inline ProfileInput uniformRun(int64_t n, const StepShape& shape) {
    ProfileInput in;
    for (int64_t i = 1; i <= n; ++i) in.steps.push_back(makeSample(i, shape));
    in.experiment = {{"data", {{"dataset", "tfrecord"}, {"train_files", "/data/train-*.tfrecord"},
                               {"test_files", "/data/test-*.tfrecord"}}},
                     {"model", {{"preset", "mlp"}}},
                     {"train", {{"batch_size", 128}, {"epochs", 1}}},
                     {"strategy", {{"type", "single"}, {"replicas", 1}}}};
    return in;
}

// A run whose input wait is `fraction` of each step's time.
inline ProfileInput runWithInputFraction(double fraction, int64_t n = 100, double step = 0.1) {
    return uniformRun(n, {.input = step * fraction, .compute = step * (1 - fraction)});
}

// A run whose exposed exchange is `fraction` of step time exactly, on 2 mirrored replicas.
inline ProfileInput runWithCommFraction(double fraction, int64_t n = 100) {
    ProfileInput in = uniformRun(n, {.compute = 0.1 * (1 - fraction), .exposed_comm = 0.1 * fraction,
                                     .comm = 0.1 * fraction});
    in.strategy = engine::StrategyKind::Mirrored;
    in.replicas = 2;
    in.experiment["strategy"] = {{"type", "mirrored"}, {"replicas", 2}};
    return in;
}

// Roofs with a ridge of 10 FLOP/B: 100 GFLOP/s, 10 GB/s.
inline MachineRoofs roofs() {
    MachineRoofs r;
    r.host = "test";
    r.threads = 2;
    r.peak_gflops = 100.0;
    r.bandwidth_gbs = 10.0;
    return r;
}

// An op of `seconds` in total over 1000 calls, at `intensity` FLOP/B, achieving `gbs` GB/s.
inline engine::prof::OpRow opAt(const std::string& kind, double seconds, double intensity, double gbs) {
    engine::prof::OpRow r;
    r.kind = kind;
    r.shape = kind + "-shape";
    r.calls = 1000;
    r.seconds = seconds;
    r.bytes = gbs * 1e9 * seconds / static_cast<double>(r.calls);
    r.flops = r.bytes * intensity;
    return r;
}

inline ProfileInput loadFixture(const std::string& name) {
    const std::string path = std::string(TRAINBENCH_TEST_DATA_DIR) + "/verdict/" + name + ".json";
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot open fixture " + path);
    const nlohmann::json doc = nlohmann::json::parse(file);
    ProfileInput in;
    in.strategy = engine::parseStrategyKind(doc.value("strategy", "single")).value();
    in.replicas = doc.value("replicas", 1);
    in.threads = doc.value("threads", 0);
    in.host_cores = doc.value("host_cores", 0);
    in.experiment = doc.value("experiment", nlohmann::json::object());
    if (doc.contains("roofs")) {
        const auto& r = doc["roofs"];
        in.roofs = MachineRoofs{r.at("host"), r.at("threads"), r.at("cpu_model"), r.at("peak_gflops"),
                                r.at("bandwidth_gbs"), r.at("measured_at")};
    }
    if (doc.contains("memory")) {
        const auto& m = doc["memory"];
        MemoryFootprint f;
        f.params_bytes = m.at("params_bytes");
        f.grads_bytes = m.at("grads_bytes");
        f.optimizer_bytes = m.at("optimizer_bytes");
        f.activation_bytes = m.at("activation_bytes");
        f.peak_rss_bytes = m.at("peak_rss_bytes");
        f.device_bytes = m.at("device_bytes");
        f.device_source = m.at("device_source").get<std::string>();
        f.swapped_pages = m.at("swapped_pages");
        f.major_faults = m.at("major_faults");
        in.memory = f;
    }
    for (const auto& o : doc.at("ops"))
        in.ops.push_back({o.at("kind"), o.at("shape"), o.at("calls"), o.at("seconds"), o.at("flops"), o.at("bytes")});
    const auto& cols = doc.at("step_columns");
    auto col = [&](const std::string& column) {
        for (size_t i = 0; i < cols.size(); ++i)
            if (cols[i] == column) return i;
        throw std::runtime_error(path + ": no step column " + column);
    };
    const size_t step = col("step"), samples = col("samples"), seconds = col("step_seconds"),
                 input = col("input_seconds"), fwd = col("forward_seconds"), bwd = col("backward_seconds"),
                 opt = col("optimizer_seconds"), exposed = col("exposed_comm_seconds"), other = col("other_seconds"),
                 eval = col("eval_seconds"), ckpt = col("checkpoint_seconds"), comm = col("comm_seconds"),
                 wait = col("wait_seconds");
    for (const auto& row : doc.at("steps")) {
        StepSample s;
        s.step = row.at(step);
        s.samples = row.at(samples);
        s.step_seconds = row.at(seconds);
        s.input_seconds = row.at(input);
        s.forward_seconds = row.at(fwd);
        s.backward_seconds = row.at(bwd);
        s.optimizer_seconds = row.at(opt);
        s.exposed_comm_seconds = row.at(exposed);
        s.other_seconds = row.at(other);
        s.eval_seconds = row.at(eval);
        s.checkpoint_seconds = row.at(ckpt);
        s.comm_seconds = row.at(comm);
        s.wait_seconds = row.at(wait);
        in.steps.push_back(s);
    }
    return in;
}

// For benchmarks: `steps` steps with a little deterministic variation (input around 8 %, an
// evaluation every 100 steps), `ops` op rows on both sides of the ridge, roofs and memory.
inline ProfileInput largeRun(int64_t steps = 10000, int ops = 20) {
    ProfileInput in = uniformRun(0, {});
    in.steps.reserve(static_cast<size_t>(steps));
    for (int64_t i = 1; i <= steps; ++i) {
        const double wobble = 1.0 + 0.1 * std::sin(static_cast<double>(i) * 0.37);
        in.steps.push_back(makeSample(i, {.input = 0.008 * wobble,
                                          .compute = 0.09 / wobble,
                                          .other = 0.002,
                                          .eval = i % 100 == 0 ? 0.5 : 0.0}));
    }
    // About 85 % of the compute phases in ops; a third of them left of the ridge.
    for (int k = 0; k < ops; ++k) {
        const double seconds = 0.085 * static_cast<double>(steps) * (0.5 + 0.1 * k) / (0.5 * ops + 0.05 * ops * (ops - 1));
        in.ops.push_back(k % 3 == 0 ? opAt("op" + std::to_string(k), seconds, 2.0, 6.0)
                                    : opAt("op" + std::to_string(k), seconds, 40.0, 1.5));
    }
    in.roofs = roofs();
    MemoryFootprint m;
    m.params_bytes = m.grads_bytes = 2e6;
    m.optimizer_bytes = 4e6;
    m.activation_bytes = 1e6;
    m.peak_rss_bytes = 2e8;
    m.device_bytes = 8e9;
    m.device_source = "host RAM";
    in.memory = m;
    in.threads = 2;
    in.host_cores = 2;
    return in;
}

inline const Evidence* findEvidence(const Finding& f, const std::string& name) {
    for (const Evidence& e : f.evidence)
        if (e.name == name) return &e;
    return nullptr;
}

}  // namespace trainbench::profiler::testutil
