// This host as an emulated device: the kernel-rate fit recovers the rates its samples were made
// from; the host model survives its JSON and is cached per host and
// thread count in the run store; a real measurement covers the kinds the probes run.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/emulation/kernelrates.h"
#include "profiler/machine/cacheprobe.h"
#include "profiler/machine/calibration.h"
#include "profiler/machine/hostmodel.h"
#include "profiler/machine/kernelfit.h"
#include "profiler/machine/kernelprobe.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::TempDir;

KernelSample sample(const std::string& kind, double flops, double bytes, double seconds, bool matrix) {
    KernelSample s;
    s.op.cost.kind = kind;
    s.op.cost.flops = flops;
    s.op.cost.bytes = bytes;
    if (matrix) s.op.matrix = {64, 64, 64};
    s.seconds = seconds;
    return s;
}

// Matrix products made as 4 us + FLOPs / 80 GFLOP/s + bytes / 20 GB/s; element-wise ops as 1 us +
// bytes / 25 GB/s. Shapes spread over three orders of magnitude, FLOPs and bytes not proportional.
std::vector<KernelSample> madeUpSamples() {
    std::vector<KernelSample> out;
    const double flops[] = {2e5, 3e6, 5e7, 9e8, 1.2e7};
    const double bytes[] = {4e4, 9e5, 2e6, 6e6, 8e6};
    for (int i = 0; i < 5; ++i) {
        out.push_back(sample("inner_product_forward", flops[i], bytes[i], 4e-6 + flops[i] / 80e9 + bytes[i] / 20e9, true));
        out.push_back(sample("eltwise_relu_backward", bytes[i] / 4, bytes[i], 1e-6 + bytes[i] / 25e9, false));
    }
    return out;
}

TEST(KernelFit, RecoversTheRatesItsSamplesWereMadeFrom) {
    const auto samples = madeUpSamples();
    const engine::KernelRates rates = fitKernelRates(samples, 1);
    ASSERT_EQ(rates.kinds.size(), 2u);
    const engine::KernelRate& ip = rates.kinds.at("inner_product_forward");
    EXPECT_NEAR(ip.overhead_s, 4e-6, 1e-9);
    EXPECT_NEAR(1.0 / ip.seconds_per_flop, 80e9, 80e9 * 1e-4);
    EXPECT_NEAR(1.0 / ip.seconds_per_byte, 20e9, 20e9 * 1e-4);
    const engine::KernelRate& relu = rates.kinds.at("eltwise_relu_backward");
    EXPECT_NEAR(relu.overhead_s, 1e-6, 1e-9);
    EXPECT_NEAR(1.0 / relu.seconds_per_byte, 25e9, 25e9 * 1e-4);
    EXPECT_EQ(relu.seconds_per_flop, 0.0);
    EXPECT_EQ(ip.samples, 5);
    EXPECT_LT(relativeError(rates, samples), 1e-6);
}

TEST(KernelFit, KindsWithTooFewSamplesAreTimedByTheirFamily) {
    auto samples = madeUpSamples();
    samples.push_back(sample("convolution_forward", 1e8, 1e6, 1e-3, true));
    samples.push_back(sample("convolution_forward", 2e8, 1e6, 2e-3, true));
    const engine::KernelRates rates = fitKernelRates(samples, 2);
    EXPECT_EQ(rates.threads, 2);
    EXPECT_EQ(rates.kinds.count("convolution_forward"), 0u);
    EXPECT_EQ(&rates.rateFor("convolution_forward", true), &rates.matrix);
    EXPECT_EQ(&rates.rateFor("pooling_max_forward", false), &rates.other);
    EXPECT_EQ(rates.matrix.samples, 7);
    EXPECT_GT(rates.matrix.seconds_per_flop, 0.0);
}

// Samples of a host whose cache holds 20 MB: a probe's parameter traffic (matrix products, updates)
// takes 2.5x as long for the part of its copies' parameters, gradients and state beyond it.
std::vector<KernelSample> madeUpSamplesWithACache(int copies) {
    std::vector<KernelSample> out;
    const double flops[] = {2e5, 3e6, 5e7, 9e8, 1.2e7, 4e8};
    const double bytes[] = {4e4, 9e5, 2e6, 6e6, 8e6, 3e7};
    const double workingSets[] = {2e6, 6e6, 12e6, 40e6, 16e6, 80e6};
    for (int i = 0; i < 6; ++i) {
        const double spill = engine::spillFraction(20e6, workingSets[i], copies);
        KernelSample ip = sample("inner_product_forward", flops[i], bytes[i],
                                 4e-6 + flops[i] / 80e9 + bytes[i] * (1 + 1.5 * spill) / 20e9, true);
        KernelSample adam = sample("adam_update", bytes[i] / 10, bytes[i], 1e-6 + bytes[i] * (1 + 1.5 * spill) / 60e9, false);
        adam.op.part = engine::StepPart::Optimizer;
        KernelSample relu = sample("eltwise_relu_backward", bytes[i] / 4, bytes[i], 1e-6 + bytes[i] / 25e9, false);
        for (KernelSample* k : {&ip, &adam, &relu}) {
            k->working_set_bytes = workingSets[i];
            k->copies = copies;
            out.push_back(*k);
        }
    }
    return out;
}

TEST(KernelFit, RatesAreThoseOfDataInTheCacheWhenTheProbesSpilled) {
    const auto samples = madeUpSamplesWithACache(2);
    const engine::KernelRates rates = fitKernelRates(samples, 1, 20e6, 1.5);
    EXPECT_EQ(rates.copies, 2);
    EXPECT_EQ(rates.cache_bytes, 20e6);
    EXPECT_EQ(rates.spill_slowdown, 1.5);
    EXPECT_NEAR(1.0 / rates.kinds.at("inner_product_forward").seconds_per_byte, 20e9, 20e9 * 1e-4);
    EXPECT_NEAR(1.0 / rates.kinds.at("adam_update").seconds_per_byte, 60e9, 60e9 * 1e-4);
    EXPECT_NEAR(1.0 / rates.kinds.at("eltwise_relu_backward").seconds_per_byte, 25e9, 25e9 * 1e-4);
    EXPECT_LT(relativeError(rates, samples), 1e-6);
    // Blind to the cache, one rate per kind cannot fit both sides of it.
    const engine::KernelRates blind = fitKernelRates(samples, 1);
    EXPECT_GT(relativeError(blind, samples), 0.05);
    EXPECT_LT(1.0 / blind.kinds.at("adam_update").seconds_per_byte, 0.9 * 60e9);
}

TEST(KernelFit, StepOverheadGrowsWithTheActivations) {
    std::vector<ProbeStep> steps;
    for (const double activations : {0.4e6, 1.5e6, 10e6, 17e6})
        steps.push_back({0, activations, 9e-6 + activations * 7e-12, 1});
    engine::KernelRates rates;
    fitStepOverhead(steps, rates);
    EXPECT_NEAR(rates.step_overhead_s, 9e-6, 1e-10);
    EXPECT_NEAR(rates.step_overhead_per_activation_byte_s, 7e-12, 1e-16);
    EXPECT_NEAR(rates.stepOverhead(5e6), 9e-6 + 35e-6, 1e-10);
    // Times that fall as the activations grow get no negative term: a constant, their typical value.
    std::vector<ProbeStep> falling{{0, 1e6, 20e-6, 1}, {1, 10e6, 10e-6, 1}};
    fitStepOverhead(falling, rates);
    EXPECT_EQ(rates.step_overhead_per_activation_byte_s, 0.0);
    EXPECT_GT(rates.step_overhead_s, 10e-6);
    EXPECT_LT(rates.step_overhead_s, 20e-6);
}

TEST(CacheCurve, FitRecoversTheCacheAndTheSlowdownItWasMadeFrom) {
    for (const int copies : {1, 2}) {
        CacheCurve curve;
        curve.copies = copies;
        for (double bytes = 0.5e6; bytes < 130e6 / copies; bytes *= std::sqrt(2.0)) {
            const double spill = engine::spillFraction(24e6, bytes, copies);
            curve.points.push_back({bytes, 80.0 / (1 + 2.0 * spill)});
        }
        fitCacheCurve(curve);
        // The cache is searched in steps of 2^(1/8) = 9 %.
        EXPECT_NEAR(curve.effective_cache_bytes, 24e6, 24e6 * 0.05) << copies;
        EXPECT_NEAR(curve.slowdown, 2.0, 0.2) << copies;
        EXPECT_NEAR(curve.cached_gbs, 80.0, 4.0) << copies;
    }
}

TEST(CacheCurve, ARateThatDoesNotFallHasNoSlowdown) {
    CacheCurve curve;
    for (double bytes = 0.5e6; bytes < 130e6; bytes *= 2) curve.points.push_back({bytes, 50.0});
    fitCacheCurve(curve);
    EXPECT_EQ(curve.slowdown, 0.0);
    EXPECT_EQ(curve.effective_cache_bytes, 0.0);
    EXPECT_NEAR(curve.cached_gbs, 50.0, 1e-9);
}

TEST(CacheCurve, TheSweepGoesPastTheCacheWithEveryCopy) {
    const CacheCurve curve = measureCacheCurve(1, 2, 16e6);
    ASSERT_FALSE(curve.points.empty());
    EXPECT_EQ(curve.copies, 2);
    EXPECT_LE(curve.points.front().bytes_per_copy, 1e6);
    // To 4x the cache in all, at least 64 MiB: 32 MiB per copy.
    EXPECT_GE(curve.points.back().bytes_per_copy * 2, 60.0 * 1024 * 1024);
    for (const CachePoint& p : curve.points) EXPECT_GT(p.gbs_per_copy, 0.1) << p.bytes_per_copy;
    EXPECT_GT(curve.cached_gbs, 0.1);
}

HostModel madeUpModel(int call) {
    HostModel m;
    m.host = "elsewhere";
    m.threads = 99;
    m.replicas = 3;
    m.measured_at = "2026-01-0" + std::to_string(call) + "T00:00:00.000Z";
    m.kernels = fitKernelRates(madeUpSamplesWithACache(3), m.threads, 20e6, 1.5);
    m.kernels.step_overhead_s = 12e-6;
    m.kernels.step_overhead_per_activation_byte_s = 1e-11;
    m.cache.copies = 3;
    m.cache.points = {{1e6, 90.0}, {64e6, 30.0}};
    m.cache.effective_cache_bytes = 20e6;
    m.cache.slowdown = 1.5;
    m.cache.cached_gbs = 88.0;
    m.kernel_fit_error = 0.05 * call;
    m.shared_memory = {3e-6, 1.0 / 5e9};
    m.loopback = {40e-6, 1.0 / 1.5e9};
    return m;
}

TEST(HostModel, SurvivesItsJson) {
    const HostModel m = madeUpModel(1);
    const HostModel back = hostModelFromJson(hostModelJson(m));
    EXPECT_EQ(back.host, m.host);
    EXPECT_EQ(back.threads, m.threads);
    EXPECT_EQ(back.replicas, m.replicas);
    EXPECT_EQ(back.measured_at, m.measured_at);
    EXPECT_EQ(back.kernels.kinds, m.kernels.kinds);
    EXPECT_EQ(back.kernels.matrix, m.kernels.matrix);
    EXPECT_EQ(back.kernels.other, m.kernels.other);
    EXPECT_EQ(back.kernels, m.kernels);  // the cache's size and slowdown, the step overhead, the copies
    EXPECT_EQ(back.cache.points.size(), 2u);
    EXPECT_DOUBLE_EQ(back.cache.points[1].gbs_per_copy, 30.0);
    EXPECT_DOUBLE_EQ(back.cache.cached_gbs, 88.0);
    EXPECT_DOUBLE_EQ(back.loopback.alpha_s, 40e-6);
    EXPECT_DOUBLE_EQ(back.shared_memory.beta_s_per_byte, 1.0 / 5e9);
    EXPECT_TRUE(back.complete());
}

TEST(HostModel, DamagedJsonSaysWhatIsMissing) {
    std::string text = hostModelJson(madeUpModel(1));
    text.replace(text.find("\"loopback\""), 10, "\"loopbacq\"");
    try {
        hostModelFromJson(text);
        FAIL() << "accepted a model without its loopback link";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("loopback"), std::string::npos) << e.what();
    }
    EXPECT_THROW(hostModelFromJson("{\"format\": 2}"), std::invalid_argument);
    // A model from before the cache term is not read: it is measured again.
    std::string old = hostModelJson(madeUpModel(1));
    old.replace(old.find("\"format\":2"), 10, "\"format\":1");
    EXPECT_THROW(hostModelFromJson(old), std::invalid_argument);
}

TEST(HostModel, IsMeasuredOncePerHostAndThreadCountThenReadFromTheStore) {
    TempDir dir;
    const std::string db = (dir.path() / "runs.db").string();
    int calls = 0;
    auto measure = [&](int, int) { return madeUpModel(++calls); };
    const HostModel first = hostModelFor(db, 1, 1, false, measure);
    EXPECT_EQ(first.host, currentHost());  // keyed by this host, whatever the measurer said
    EXPECT_EQ(first.threads, 1);
    const HostModel again = hostModelFor(db, 1, 1, false, measure);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(again.measured_at, first.measured_at);
    EXPECT_EQ(again.kernels.kinds, first.kernels.kinds);
    hostModelFor(db, 2, 1, false, measure);
    EXPECT_EQ(calls, 2);
    // Two replicas sharing the host are another measurement: their kernels run side by side.
    EXPECT_EQ(hostModelFor(db, 1, 2, false, measure).replicas, 2);
    EXPECT_EQ(calls, 3);
    const HostModel fresh = hostModelFor(db, 1, 1, true, measure);
    EXPECT_EQ(calls, 4);
    EXPECT_EQ(hostModelFor(db, 1, 1, false, measure).measured_at, fresh.measured_at);
}

TEST(HostModel, AMeasurementCoversEveryKindTheProbesRun) {
    const HostModel m = measureHostModel(1);
    EXPECT_TRUE(m.complete());
    for (const char* kind : {"inner_product_forward", "inner_product_backward_data", "inner_product_backward_weights",
                             "convolution_forward", "convolution_backward_data", "convolution_backward_weights",
                             "eltwise_relu_backward", "adam_update", "sgd_momentum_update", "pooling_max_forward",
                             "pooling_max_backward"})
        EXPECT_EQ(m.kernels.kinds.count(kind), 1u) << kind;
    EXPECT_GT(m.kernels.matrix.samples, 20);
    EXPECT_FALSE(m.cache.points.empty());
    EXPECT_EQ(m.kernels.cache_bytes, m.cache.effective_cache_bytes);
    EXPECT_GT(m.kernels.stepOverhead(1e6), 0.0);  // the loss and the reorders take some time
    EXPECT_GT(m.shared_memory.beta_s_per_byte, 0.0);
    EXPECT_GT(m.loopback.beta_s_per_byte, 0.0);
}

}  // namespace
}  // namespace trainbench::profiler
