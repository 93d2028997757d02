#include "profiler/machine/kernelprobe.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/emulation/opgraph.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/strategy/strategy.h"

namespace trainbench::profiler {

namespace {

using engine::LayerKind;
using engine::LayerSpec;

LayerSpec layer(LayerKind kind, int size = 0, int kernel = 3, int padding = 0) {
    LayerSpec l;
    l.kind = kind;
    if (kind == LayerKind::Dense) l.units = size;
    if (kind == LayerKind::Conv2D) l.filters = size;
    l.kernel = kernel;
    l.padding = padding;
    if (kind == LayerKind::MaxPool2D) l.stride = kernel;
    return l;
}

}  // namespace

// Shapes chosen to differ from the benchmark workloads (W1, W2) and from each other: matrix
// dimensions from tens to a thousand or so, shallow and deep convolutions, both optimizers, and
// parameters from a few hundred thousand (held in the caches) to 1.5 million (24 MB with Adam's
// state and the gradients: beyond them once two copies share a 32 MiB cache).
std::vector<ProbeModel> probeModels() {
    const LayerSpec relu = layer(LayerKind::ReLU), flatten = layer(LayerKind::Flatten);
    const LayerSpec pool = layer(LayerKind::MaxPool2D, 0, 2);
    std::vector<ProbeModel> p;
    p.push_back({{flatten, layer(LayerKind::Dense, 1200), relu, layer(LayerKind::Dense, 300), relu,
                  layer(LayerKind::Dense, 10)},
                 {1, 24, 40}, 96, engine::OptimizerKind::Adam});
    p.push_back({{flatten, layer(LayerKind::Dense, 640), relu, layer(LayerKind::Dense, 40), relu,
                  layer(LayerKind::Dense, 10)},
                 {2, 20, 15}, 200, engine::OptimizerKind::SGD});
    p.push_back({{layer(LayerKind::Conv2D, 20, 3, 1), relu, pool, layer(LayerKind::Conv2D, 40, 3), relu, pool, flatten,
                  layer(LayerKind::Dense, 64), relu, layer(LayerKind::Dense, 10)},
                 {3, 30, 30}, 64, engine::OptimizerKind::SGD});
    p.push_back({{layer(LayerKind::Conv2D, 96, 3, 1), relu, layer(LayerKind::Conv2D, 48, 3), relu, pool,
                  layer(LayerKind::Conv2D, 32, 3), relu, flatten, layer(LayerKind::Dense, 10)},
                 {24, 14, 14}, 40, engine::OptimizerKind::Adam});
    p.push_back({{flatten, layer(LayerKind::Dense, 700), relu, layer(LayerKind::Dense, 200), relu,
                  layer(LayerKind::Dense, 10)},
                 {1, 30, 20}, 100, engine::OptimizerKind::Adam});
    p.push_back({{flatten, layer(LayerKind::Dense, 360), relu, layer(LayerKind::Dense, 360), relu,
                  layer(LayerKind::Dense, 120), relu, layer(LayerKind::Dense, 10)},
                 {3, 12, 12}, 48, engine::OptimizerKind::Adam});
    return p;
}

namespace {

using Key = std::tuple<std::string, std::string>;  // kind, shape

constexpr int kWarmupSteps = 2;
constexpr int kTimedSteps = 9;
constexpr int64_t kClasses = 10;

// `together`: the copies of the probe running side by side, met before every step as replicas meet.
void runProbe(const ProbeModel& probe, int index, int threads, int copies, std::barrier<>& together,
              KernelProbes& out) {
    engine::ModelSpec spec;
    spec.layers = probe.layers;
    engine::OptimizerConfig oc;
    oc.kind = probe.optimizer;
    if (oc.kind == engine::OptimizerKind::SGD) oc.momentum = 0.9f;
    oc.learning_rate = 1e-4f;
    engine::CpuDevice device(threads);
    device.bindThreads();
    engine::Model model(spec, probe.sample, kClasses, device, 7);
    auto optimizer = engine::Optimizer::create(oc, model.paramCount());
    engine::SingleStrategy strategy(model, *optimizer);

    const int64_t exampleSize = probe.sample[0] * probe.sample[1] * probe.sample[2];
    std::vector<float> x(static_cast<size_t>(exampleSize * probe.batch));
    std::vector<int32_t> y(static_cast<size_t>(probe.batch));
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    for (float& v : x) v = pixel(rng);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(i % kClasses);
    std::vector<float> batch(x.size());

    // Returns the step's wall time.
    auto step = [&](int64_t s) {
        together.arrive_and_wait();
        std::copy(x.begin(), x.end(), batch.begin());  // the step may overwrite its input
        const auto start = std::chrono::steady_clock::now();
        strategy.step(engine::BatchView{batch.data(), y.data(), probe.batch}, s, static_cast<uint64_t>(s), {});
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (int s = 1; s <= kWarmupSteps; ++s) step(s);
    // Per-call time of every (kind, shape) in each timed step, from the difference of snapshots; the
    // median step counts. Not the best, as for the roofs: copies side by side slow each other down
    // by more in some steps than in others, and a run's step is their typical, not their luckiest.
    std::map<Key, std::pair<double, int64_t>> last;
    for (const auto& r : device.ops().snapshot()) last[{r.kind, r.shape}] = {r.seconds, r.calls};
    std::map<Key, std::vector<double>> perCall;
    std::vector<double> walls;
    std::vector<std::map<Key, double>> stepSeconds;  // each timed step's time by (kind, shape)
    for (int s = 1; s <= kTimedSteps; ++s) {
        walls.push_back(step(kWarmupSteps + s));
        stepSeconds.emplace_back();
        for (const auto& r : device.ops().snapshot()) {
            auto& [seconds, calls] = last[{r.kind, r.shape}];
            if (r.calls > calls) {
                perCall[{r.kind, r.shape}].push_back((r.seconds - seconds) / static_cast<double>(r.calls - calls));
                stepSeconds.back()[{r.kind, r.shape}] = r.seconds - seconds;
            }
            seconds = r.seconds;
            calls = r.calls;
        }
    }
    // The graph names every op of the step by shapes; identical ops share one measured row.
    const engine::OpGraph graph = engine::trainingStepGraph(spec, probe.sample, kClasses, probe.batch, oc);
    const double parameterBytes = graph.params_bytes + graph.grads_bytes + graph.optimizer_bytes;
    std::map<Key, bool> seen;
    for (const engine::OpDesc& op : graph.ops) {
        const Key key{op.cost.kind, op.cost.shape};
        auto it = perCall.find(key);
        if (it == perCall.end() || seen[key]) continue;
        seen[key] = true;
        std::vector<double>& t = it->second;
        std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
        out.samples.push_back({op, t[t.size() / 2], index, parameterBytes, copies});
    }
    // What the step spends outside the graph's ops (the loss, layout reorders, the strategy's own
    // work): its wall time less theirs, the median step.
    std::vector<double> outside;
    for (size_t s = 0; s < walls.size(); ++s) {
        double ops = 0.0;
        for (const auto& [key, seconds] : stepSeconds[s])
            if (seen.count(key)) ops += seconds;
        outside.push_back(std::max(0.0, walls[s] - ops));
    }
    std::nth_element(outside.begin(), outside.begin() + static_cast<std::ptrdiff_t>(outside.size() / 2), outside.end());
    out.steps.push_back({index, graph.activation_bytes, outside[outside.size() / 2], copies});
}

}  // namespace

KernelProbes probeKernels(int threads, int replicas) { return timeModels(probeModels(), threads, replicas); }

KernelProbes timeModels(const std::vector<ProbeModel>& models, int threads, int replicas) {
    replicas = std::max(1, replicas);
    std::vector<KernelProbes> out(static_cast<size_t>(replicas));
    std::barrier together(replicas);  // every copy starts each step with the others
    std::exception_ptr error;
    std::mutex errorMutex;
    auto copy = [&](int r) {
        try {
            for (size_t i = 0; i < models.size(); ++i)
                runProbe(models[i], static_cast<int>(i), threads, replicas, together, out[static_cast<size_t>(r)]);
        } catch (...) {
            together.arrive_and_drop();  // the other copies must not wait for this one at the next probe
            const std::lock_guard lock(errorMutex);
            error = std::current_exception();
        }
    };
    std::vector<std::thread> others;
    for (int r = 1; r < replicas; ++r) others.emplace_back(copy, r);
    copy(0);
    for (std::thread& t : others) t.join();
    if (error) std::rethrow_exception(error);
    return out.front();
}

}  // namespace trainbench::profiler
