// A run's memory: the model's footprint by hand-counted shapes for the W1 (mlp) and W2 (cnn)
// models, against the host's RAM or the experiment's device limit; and the process figures
// (peak resident set, swapping, faults) that the capacity verdict reads.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/model/model.h"
#include "engine/model/modelspec.h"
#include "profiler/machine/memoryprobe.h"
#include "profiler/machine/memorywatch.h"

namespace trainbench::profiler {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

engine::ModelSpec preset(const std::string& name) {
    engine::ModelSpec spec;
    spec.preset = name;
    spec.layers = engine::presetLayers(name);
    return spec;
}

std::vector<std::string> kindsOf(const engine::Model& model) {
    std::vector<std::string> kinds;
    for (const auto& layer : model.layers()) kinds.emplace_back(layer->kind());
    return kinds;
}

// Touches every page so they become resident.
void touch(std::vector<char>& buffer) {
    std::memset(buffer.data(), 1, buffer.size());
    volatile char sink = buffer[buffer.size() / 2];
    (void)sink;
}

TEST(MemoryFootprint, MlpByHand) {
    engine::CpuDevice device(1);
    const engine::Model model(preset("mlp"), {1, 28, 28}, 10, device, 42);
    // 784*512+512 + 512*256+256 + 256*10+10
    ASSERT_EQ(model.paramCount(), 535'818);
    ASSERT_EQ(kindsOf(model), (std::vector<std::string>{"flatten", "dense", "relu", "dense", "relu", "dense"}));

    const int64_t batch = 32;
    const MemoryFootprint adam = footprintOf(model, batch, 2.0);
    EXPECT_EQ(adam.params_bytes, 535'818.0 * 4);
    EXPECT_EQ(adam.grads_bytes, 535'818.0 * 4);
    EXPECT_EQ(adam.optimizer_bytes, 2 * 535'818.0 * 4);
    // Per example, in floats. The layers report six outputs (784, 512, 512, 256, 256, 10), but the
    // model holds fewer tensors: flatten is a view of the input batch (784, counted once as the
    // input), and both ReLUs are fused into the dense before them, their outputs being those dense
    // outputs. So: the input, each dense output (512, 256, 10) and the gradient of each (the first
    // dense's output gradient is needed for its weight gradient; the last is the loss gradient).
    // The input's own gradient is never computed (the first dense needs none).
    const double perExample = 784 + (512 + 256 + 10) * 2;
    EXPECT_EQ(adam.activation_bytes, batch * perExample * 4);
    EXPECT_EQ(adam.modelBytes(), adam.params_bytes * 4 + adam.activation_bytes);

    EXPECT_EQ(adam.device_source, "host RAM");
    EXPECT_EQ(adam.device_bytes, static_cast<double>(hostMemoryBytes()));
    // Process figures are MemoryWatch's.
    EXPECT_EQ(adam.peak_rss_bytes, 0.0);

    const MemoryFootprint sgd = footprintOf(model, 128, 0.0, 512 * kMiB);
    EXPECT_EQ(sgd.optimizer_bytes, 0.0);
    EXPECT_EQ(sgd.activation_bytes, 128 * perExample * 4);
    EXPECT_EQ(sgd.device_source, "device.memory_mb");
    EXPECT_EQ(sgd.device_bytes, 512 * kMiB);
}

TEST(MemoryFootprint, CnnCountsFlattenCopyAndTheGradientsBackwardComputes) {
    engine::CpuDevice device(1);
    const engine::Model model(preset("cnn"), {1, 28, 28}, 10, device, 42);
    // conv 1->32 3x3, conv 32->64 3x3, dense 1600->128, dense 128->10, with biases.
    ASSERT_EQ(model.paramCount(), (9 * 32 + 32) + (9 * 32 * 64 + 64) + (1600 * 128 + 128) + (128 * 10 + 10));
    // ReLU before pooling runs after it (Model::executionOrder).
    ASSERT_EQ(kindsOf(model), (std::vector<std::string>{"conv2d", "maxpool2d", "relu", "conv2d", "maxpool2d",
                                                        "relu", "flatten", "dense", "relu", "dense"}));
    // Outputs per example: conv 32x26x26, pool 32x13x13, conv 64x11x11, pool 64x5x5, flatten 1600
    // (a plain copy of the pool's blocked output), dense 128, dense 10; the ReLUs work in place.
    // Every one of them has a gradient: the first conv's output gradient feeds its weight gradient
    // (the pool after it computes it), and the rest follow.
    const double outputs = 32 * 26 * 26 + 32 * 13 * 13 + 64 * 11 * 11 + 64 * 5 * 5 + 1600 + 128 + 10;
    const double perExample = 784 + 2 * outputs;
    const MemoryFootprint footprint = footprintOf(model, 64, 2.0);
    EXPECT_EQ(footprint.activation_bytes, 64 * perExample * 4);
}

TEST(MemoryFootprint, DenseAfterAConvolutionAndDropoutByHand) {
    engine::CpuDevice device(1);
    engine::LayerSpec conv, relu, dense, dropout, logits;
    conv.kind = engine::LayerKind::Conv2D;
    conv.filters = 8;
    relu.kind = engine::LayerKind::ReLU;
    dense.units = 64;
    dropout.kind = engine::LayerKind::Dropout;
    dropout.rate = 0.5f;
    logits.units = 10;
    engine::ModelSpec spec;
    spec.layers = {conv, relu, dense, dropout, logits};
    const engine::Model model(spec, {1, 28, 28}, 10, device, 42);
    ASSERT_EQ(kindsOf(model), (std::vector<std::string>{"conv2d", "relu", "dense", "dropout", "dense"}));
    // Per example: the input (784); the conv output 8x26x26 and its gradient (the ReLU fused into
    // the conv works in place); the dense layer's plain copy of that blocked output and the
    // gradient of the copy; the dense output (64) and its gradient, which dropout scales in place,
    // plus dropout's mask (64); the logits (10) and the loss gradient.
    const double conv8 = 8 * 26 * 26;
    const double perExample = 784 + 2 * conv8 + 2 * conv8 + 2 * 64 + 64 + 2 * 10;
    EXPECT_EQ(footprintOf(model, 16, 0.0).activation_bytes, 16 * perExample * 4);
    EXPECT_THROW(footprintOf(model, 0, 0.0), std::invalid_argument);
}

TEST(MemoryFootprint, OptimizerStateFloatsPerParam) {
    engine::OptimizerConfig config;
    config.kind = engine::OptimizerKind::Adam;
    EXPECT_EQ(optimizerStateFloatsPerParam(config), 2.0);
    config.kind = engine::OptimizerKind::SGD;
    EXPECT_EQ(optimizerStateFloatsPerParam(config), 0.0);
    config.momentum = 0.9f;
    EXPECT_EQ(optimizerStateFloatsPerParam(config), 1.0);
}

TEST(MemoryProbe, PeakResidentSetGrowsWithATouchedBuffer) {
    ASSERT_TRUE(resetPeakRss());
    const int64_t before = peakRssBytes();
    ASSERT_GT(before, 0);
    std::vector<char> buffer(static_cast<size_t>(64 * kMiB));
    touch(buffer);
    const int64_t after = peakRssBytes();
    EXPECT_GE(static_cast<double>(after - before), 60 * kMiB) << before << " -> " << after;
}

TEST(MemoryProbe, HostMemoryIsMemTotal) {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    meminfo >> key >> kib;
    ASSERT_EQ(key, "MemTotal:");
    EXPECT_EQ(hostMemoryBytes(), kib * 1024);
    EXPECT_GT(hostMemoryBytes(), int64_t{1} << 30);
}

TEST(MemoryWatch, PeakCoversOnlyTheWatchedStretch) {
    {
        // An earlier peak (a calibration's arrays, say), freed before training starts. Mapped and
        // unmapped directly: an allocator (ASan's quarantine above all) may keep freed memory resident.
        const size_t size = static_cast<size_t>(128 * kMiB);
        void* earlier = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(earlier, MAP_FAILED);
        for (size_t i = 0; i < size; i += 4096) static_cast<volatile char*>(earlier)[i] = 1;
        munmap(earlier, size);
    }
    const int64_t processPeak = peakRssBytes();
    const MemoryWatch watch;
    ASSERT_TRUE(watch.peakCoversWatch());
    std::vector<char> buffer(static_cast<size_t>(32 * kMiB));
    touch(buffer);

    MemoryFootprint footprint;
    watch.fill(footprint);
    EXPECT_GE(footprint.peak_rss_bytes, 32 * kMiB);
    EXPECT_LT(footprint.peak_rss_bytes, static_cast<double>(processPeak));
    EXPECT_EQ(footprint.swapped_pages, watch.swappedPages());
    EXPECT_GE(footprint.swapped_pages, 0);
    EXPECT_GE(footprint.major_faults, 0);
}

}  // namespace
}  // namespace trainbench::profiler
