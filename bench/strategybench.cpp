#include "bench/strategybench.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "bench/benchutil.h"
#include "engine/data/batcher.h"
#include "engine/data/imagedataset.h"
#include "engine/strategy/mirroredstrategy.h"

namespace trainbench::bench {

using namespace trainbench::engine;

int mirroredScaling(const std::string& preset, int replicas, int rounds, int steps, int64_t batch) {
    DataConfig data;
    ImageDataset train = loadIdxDataset(data, true);
    ModelSpec spec;
    spec.preset = preset;
    spec.layers = presetLayers(preset);
    OptimizerConfig oc;  // Adam, as W1 and W2 train
    const Dims shape{1, 28, 28};

    struct Config {
        std::string label;
        std::unique_ptr<CpuDevice> device;
        std::unique_ptr<Model> model;
        std::unique_ptr<Optimizer> optimizer;
        std::unique_ptr<Strategy> strategy;
        std::vector<double> throughput;
        int64_t step = 0;
    };
    std::vector<Config> configs(3);
    auto single = [&](Config& c, int threads) {
        c.label = "single, " + std::to_string(threads) + " thread(s)";
        c.device = std::make_unique<CpuDevice>(threads);
        c.model = std::make_unique<Model>(spec, shape, 10, *c.device, 42);
        c.optimizer = Optimizer::create(oc, c.model->paramCount());
        c.strategy = std::make_unique<SingleStrategy>(*c.model, *c.optimizer);
    };
    single(configs[0], 1);
    single(configs[1], replicas);
    configs[2].label = "mirrored, " + std::to_string(replicas) + " replicas x 1 thread";
    configs[2].strategy = std::make_unique<MirroredStrategy>(
        ReplicaSpec{.model = spec, .sampleShape = shape, .numClasses = 10, .optimizer = oc, .seed = 42, .threads = 1},
        replicas);

    Batcher batcher(train, batch, true, true, 42);
    AlignedBuffer x(static_cast<size_t>(batch * 784));
    std::vector<int32_t> y(static_cast<size_t>(batch));
    auto nextBatch = [&] {
        if (batcher.next(x.data(), y.data()) == 0) {
            batcher.startEpoch(batcher.epoch() + 1);
            batcher.next(x.data(), y.data());
        }
    };
    auto run = [&](Config& c, int n) {
        c.strategy->bindThreads();
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            nextBatch();
            c.strategy->step(BatchView{x.data(), y.data(), batch}, ++c.step, 0, {});
        }
        return secondsSince(t0);
    };
    for (Config& c : configs) run(c, 5);  // warm-up: primitives created, caches filled
    for (int r = 0; r < rounds; ++r)
        for (Config& c : configs) c.throughput.push_back(static_cast<double>(steps * batch) / run(c, steps));

    const double one = median(configs[0].throughput), many = median(configs[1].throughput),
                 mirrored = median(configs[2].throughput);
    std::printf("%s, global batch %lld, %d rounds of %d steps, median samples/s:\n", preset.c_str(),
                static_cast<long long>(batch), rounds, steps);
    for (const Config& c : configs) std::printf("  %-36s %9.0f\n", c.label.c_str(), median(c.throughput));
    std::printf("mirrored / single 1 thread:  %.2fx (scaling efficiency %.0f %%; goal >= 1.70x for 2 replicas)\n",
                mirrored / one, 100.0 * mirrored / one / replicas);
    std::printf("mirrored / single %d threads: %.2f (goal >= 0.90)\n", replicas, mirrored / many);
    return 0;
}

}  // namespace trainbench::bench
