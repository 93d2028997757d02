#pragma once
// Loss curves of strategies on the same fixed batches, for comparing a strategy that splits the work
// (pipeline stages, tensor-parallel devices) with one device on the same global batch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/data/pipeline/datasource.h"
#include "engine/model/modelspec.h"
#include "engine/strategy/strategy.h"
#include "engine/util/rng.h"

namespace trainbench::engine::testing {

// Fixed random examples and labels: the same batches for every strategy.
struct Batches {
    std::vector<std::vector<float>> x;
    std::vector<std::vector<int32_t>> y;
};
inline Batches makeBatches(int steps, int64_t batch, int64_t exampleSize, uint64_t seed = 2024) {
    Batches b;
    Rng rng(seed);
    for (int s = 0; s < steps; ++s) {
        std::vector<float> x(static_cast<size_t>(batch * exampleSize));
        for (float& v : x) v = rng.uniform(0.0f, 1.0f);
        std::vector<int32_t> y(static_cast<size_t>(batch));
        for (auto& v : y) v = static_cast<int32_t>(rng.uniform(0.0f, 9.999f));
        b.x.push_back(std::move(x));
        b.y.push_back(std::move(y));
    }
    return b;
}

// The first steps x batch examples of Fashion-MNIST's training set, in order (none when the data set
// is not installed): a problem that learns, where rounding differences between equivalent
// computations stay rounding differences (on random labels a ReLU or max-pool decision flipped by
// rounding sends two runs apart by 1e-3 within 50 steps, one device against itself on 1 and 2 threads).
inline Batches fashionBatches(int steps, int64_t batch) {
    Batches b;
    DataConfig data;
    data.train_limit = steps * batch;
    data.test_limit = 100;
    data.shuffle = false;
    if (!std::filesystem::exists(std::filesystem::path(data.path) / "train-images-idx3-ubyte.gz")) return b;
    TrainingData d = openTrainingData(data, batch, 1);
    d.train->startEpoch(0);
    for (int s = 0; s < steps; ++s) {
        const BatchView v = d.train->next();
        if (v.count != batch) break;
        b.x.emplace_back(v.x, v.x + batch * d.channels * d.height * d.width);
        b.y.emplace_back(v.y, v.y + batch);
    }
    return b;
}

inline std::vector<double> lossCurve(Strategy& strategy, const Batches& batches, int64_t batch) {
    strategy.bindThreads();
    std::vector<double> losses;
    for (size_t s = 0; s < batches.x.size(); ++s) {
        std::vector<float> x = batches.x[s];  // a step may overwrite its input
        const BatchView view{x.data(), batches.y[s].data(), batch};
        losses.push_back(strategy.step(view, static_cast<int64_t>(s) + 1, 77 + s, {}).loss);
    }
    return losses;
}

inline ReplicaSpec replicaOf(const std::string& preset) {
    ReplicaSpec spec;
    spec.model.preset = preset;
    spec.model.layers = presetLayers(preset);
    spec.sampleShape = {1, 28, 28};
    spec.numClasses = 10;
    spec.seed = 42;
    spec.threads = 1;
    return spec;
}

inline double worstRelative(const std::vector<double>& a, const std::vector<double>& b) {
    double worst = 0.0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
    return worst;
}

// RMS of the difference of two models' parameters relative to b's RMS.
inline double relativeParamDistance(Model& a, Model& b) {
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < b.paramCount(); ++i) {
        const double d = static_cast<double>(a.params()[i]) - b.params()[i];
        diff += d * d;
        norm += static_cast<double>(b.params()[i]) * b.params()[i];
    }
    return std::sqrt(diff / norm);
}

}  // namespace trainbench::engine::testing
