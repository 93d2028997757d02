// The emulated devices' cost model against closed forms worked out by hand from the catalog's
// figures: a matmul on a TPU core takes FLOPs / (MXUs x 128 x 128 x 2 x clock) with the dimensions
// padded, memory-bound ops take bytes / bandwidth, each plus the per-op overhead; a footprint over
// a replica's memory fails like the device would.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/devicememory.h"
#include "engine/emulation/devicetiming.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

using test::device;
using test::kGiB;

// A matrix product C[m x n] = A[m x k] B[k x n] with fp32 traffic (A, B and C once each).
OpDesc matmul(int64_t m, int64_t n, int64_t k, StepPart part = StepPart::Forward, int64_t calls = 1) {
    OpDesc op;
    op.cost.kind = "inner_product_forward";
    op.cost.flops = 2.0 * double(m) * double(n) * double(k);
    op.cost.bytes = 4.0 * double(m * k + k * n + m * n);
    op.matrix = {m, n, k};
    op.part = part;
    op.calls = calls;
    return op;
}

OpDesc elementwise(double elements, double flopsPerElement, int tensors, StepPart part = StepPart::Forward) {
    OpDesc op;
    op.cost.kind = "eltwise_relu_forward";
    op.cost.flops = elements * flopsPerElement;
    op.cost.bytes = 4.0 * elements * tensors;
    op.part = part;
    return op;
}

// A v3 TensorCore: 2 MXUs x 128 x 128 MACs x 2 FLOPs = 65,536 FLOP per cycle at 940 MHz.
TEST(DeviceTiming, PaddedMatmulOnTpuV3CoreIsTheClosedForm) {
    const OpTiming t = opTime(matmul(100, 100, 100), device("tpu-v3"), Precision::Bf16);
    // Padded to 104 x 128 x 128: 2 x 104 x 128 x 128 = 3,407,872 FLOPs = 52 cycles = 52 / 940 MHz.
    EXPECT_EQ(t.issued_flops, 3407872.0);
    EXPECT_DOUBLE_EQ(t.compute_s, 5.5319148936170216e-08);
    // Only 1e6 of those FLOPs are useful: 100^3 / (104 x 128 x 128).
    EXPECT_DOUBLE_EQ(t.matrix_utilisation, 0.5868765024038461);
    // At this size the op is memory-bound: 3 x 100 x 100 bf16 values = 60,000 bytes at 450 GB/s
    // (half the chip's 900), plus the 1 us per-op overhead.
    EXPECT_TRUE(t.memoryBound());
    EXPECT_DOUBLE_EQ(t.memory_s, 60000.0 / 450e9);
    EXPECT_DOUBLE_EQ(t.seconds, 60000.0 / 450e9 + 1e-6);
}

TEST(DeviceTiming, AlignedMatmulOnTpuV3CoreIsComputeBound) {
    const OpTiming t = opTime(matmul(1024, 1024, 1024), device("tpu-v3"), Precision::Bf16);
    // 2 x 1024^3 / 65,536 FLOP per cycle = 32,768 cycles at 940 MHz = 34.8596 us; no padding.
    EXPECT_DOUBLE_EQ(t.compute_s, 3.485957446808511e-05);
    EXPECT_EQ(t.matrix_utilisation, 1.0);
    EXPECT_FALSE(t.memoryBound());  // 6 MiB of bf16 at 450 GB/s is 14.0 us
    EXPECT_DOUBLE_EQ(t.seconds, 3.485957446808511e-05 + 1e-6);
    // fp32 on a TPU multiplies on the same MXUs (bf16 inputs): same compute, twice the bytes.
    const OpTiming f = opTime(matmul(1024, 1024, 1024), device("tpu-v3"), Precision::Fp32);
    EXPECT_EQ(f.compute_s, t.compute_s);
    EXPECT_EQ(f.bytes, 2.0 * t.bytes);
}

TEST(DeviceTiming, TpuV4ReplicaIsTheWholeChip) {
    // Megacore: 8 MXUs x 128 x 128 x 2 = 262,144 FLOP per cycle; 2^31 / 262,144 = 8,192 cycles at 1050 MHz.
    const OpTiming t = opTime(matmul(1024, 1024, 1024), device("tpu-v4"), Precision::Bf16);
    EXPECT_DOUBLE_EQ(t.compute_s, 7.801904761904762e-06);
}

TEST(DeviceTiming, PostOpFlopsGoToTheVectorUnit) {
    // Bias + ReLU over the 1024 x 1024 output: 2,097,152 extra FLOPs at a v3 core's vector rate,
    // 128 lanes x 8 sublanes x 2 ALUs x 940 MHz = 1.92512 TFLOP/s.
    OpDesc op = matmul(1024, 1024, 1024);
    op.cost.flops += 2.0 * 1024 * 1024;
    const OpTiming t = opTime(op, device("tpu-v3"), Precision::Bf16);
    EXPECT_DOUBLE_EQ(t.compute_s, 3.485957446808511e-05 + 2097152.0 / 1.92512e12);
    EXPECT_EQ(t.matrix_utilisation, 1.0);
}

TEST(DeviceTiming, MemoryBoundElementwiseIsBytesOverBandwidthPlusOverhead) {
    // ReLU over 1M floats on an A100 40GB: read + write 8 MB at 1,555 GB/s, plus the 5 us launch.
    const OpTiming t = opTime(elementwise(1e6, 1.0, 2), device("a100-sxm4-40gb"), Precision::Fp32);
    EXPECT_TRUE(t.memoryBound());
    EXPECT_FALSE(t.matrix_unit);
    EXPECT_DOUBLE_EQ(t.memory_s, 5.144694533762058e-06);
    EXPECT_DOUBLE_EQ(t.seconds, 5.144694533762058e-06 + 5e-6);
    EXPECT_DOUBLE_EQ(t.compute_s, 1e6 / 19.5e12);
    // bf16 halves the traffic.
    EXPECT_DOUBLE_EQ(opTime(elementwise(1e6, 1.0, 2), device("a100-sxm4-40gb"), Precision::Bf16).memory_s,
                     4e6 / 1555e9);
}

TEST(DeviceTiming, GpuMatrixRateFollowsThePrecision) {
    const OpDesc op = matmul(1024, 1024, 1024);
    // A100 TF32 tensor cores, 156 TFLOP/s: 2^31 / 156e12 = 13.766 us; compute-bound.
    EXPECT_DOUBLE_EQ(opTime(op, device("a100-sxm4-40gb"), Precision::Tf32).seconds, 1.3765920820512821e-05 + 5e-6);
    EXPECT_DOUBLE_EQ(opTime(op, device("a100-sxm4-40gb"), Precision::Bf16).compute_s, 2147483648.0 / 312e12);
    EXPECT_DOUBLE_EQ(opTime(op, device("a100-sxm4-40gb"), Precision::Fp32).compute_s, 2147483648.0 / 19.5e12);
    // GPUs do not pad here.
    EXPECT_EQ(opTime(matmul(100, 100, 100), device("h100-sxm5-80gb"), Precision::Bf16).matrix_utilisation, 1.0);
}

TEST(DeviceTiming, APrecisionTheDeviceLacksIsAnError) {
    for (const char* id : {"v100-sxm2-16gb", "tpu-v3"}) {
        try {
            opTime(matmul(8, 8, 8), device(id), Precision::Tf32);
            ADD_FAILURE() << id << ": expected std::invalid_argument";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind(std::string(id) + " has no tf32 matrix rate", 0), 0u) << e.what();
        }
    }
    // Non-matrix ops too: the precision is the run's, not the op's.
    EXPECT_THROW(opTime(elementwise(8, 1, 2), device("tpu-v2"), Precision::Tf32), std::invalid_argument);
    EXPECT_THROW(opTime(elementwise(8, 1, 2), device("cpu-host"), Precision::Fp32), std::invalid_argument);
}

TEST(DeviceTiming, CalibratedHostUsesItsMeasuredRoofs) {
    const DeviceSpec host = device("cpu-host").withCalibration(50.0, 10.0, 8 * kGiB);
    EXPECT_DOUBLE_EQ(opTime(matmul(1024, 1024, 1024), host, Precision::Fp32).compute_s, 0.04294967296);
    EXPECT_DOUBLE_EQ(opTime(elementwise(125e6, 1.0, 2), host, Precision::Fp32).seconds, 0.1 + 2e-6);
    EXPECT_THROW(opTime(matmul(8, 8, 8), host, Precision::Bf16), std::invalid_argument);
}

TEST(DeviceTiming, CalibratedHostWithKernelRatesIsTimedByThem) {
    KernelRates rates;
    rates.threads = 1;
    rates.kinds["inner_product_forward"] = {5e-6, 1.0 / 80e9, 1.0 / 40e9, 4};
    rates.other = {1e-6, 0.0, 1.0 / 25e9, 9};
    const DeviceSpec host = device("cpu-host").withCalibration(100.0, 10.0, 8 * kGiB, rates);
    // Arithmetic and traffic add up (no roofline max) and the fitted overhead replaces the catalog's.
    const OpDesc mm = matmul(128, 512, 784);
    const OpTiming t = opTime(mm, host, Precision::Fp32);
    EXPECT_NEAR(t.seconds, 5e-6 + mm.cost.flops / 80e9 + mm.cost.bytes / 40e9, 1e-12);
    EXPECT_NEAR(t.compute_s, mm.cost.flops / 80e9, 1e-12);
    // A kind without its own fit takes its family's.
    const OpDesc relu = elementwise(1e6, 1.0, 2);
    EXPECT_NEAR(opTime(relu, host, Precision::Fp32).seconds, 1e-6 + 8e6 / 25e9, 1e-12);
    EXPECT_THROW(device("cpu-host").withCalibration(100.0, 10.0, 8 * kGiB, KernelRates{}), std::invalid_argument);
}

TEST(DeviceTiming, CalibratedHostChargesParameterTrafficByWhatItsCacheHolds) {
    KernelRates rates;
    rates.threads = 1;
    rates.copies = 2;
    rates.kinds["inner_product_forward"] = {5e-6, 1.0 / 80e9, 1.0 / 40e9, 4};
    rates.other = {1e-6, 0.0, 1.0 / 25e9, 9};
    rates.cache_bytes = 32e6;
    rates.spill_slowdown = 1.5;
    const DeviceSpec host = device("cpu-host").withCalibration(100.0, 10.0, 8 * kGiB, rates);
    const OpDesc mm = matmul(128, 512, 784);
    const double inCache = 5e-6 + mm.cost.flops / 80e9 + mm.cost.bytes / 40e9;
    // Two copies of 16 MB fill the 32 MB cache exactly: nothing spills.
    EXPECT_NEAR(opTime(mm, host, Precision::Fp32, 16e6).seconds, inCache, 1e-12);
    EXPECT_NEAR(opTime(mm, host, Precision::Fp32).seconds, inCache, 1e-12);
    // Two copies of 32 MB: half of it is beyond the cache, so the bytes take 1 + 1.5 x 0.5 times as long.
    const OpTiming spilled = opTime(mm, host, Precision::Fp32, 32e6);
    EXPECT_NEAR(spilled.seconds, 5e-6 + mm.cost.flops / 80e9 + 1.75 * mm.cost.bytes / 40e9, 1e-12);
    EXPECT_NEAR(spilled.memory_s, 1.75 * mm.cost.bytes / 40e9, 1e-12);
    // An optimizer update streams the parameters too; a ReLU's activations are not charged for them.
    OpDesc adam = elementwise(1e6, 10.0, 7, StepPart::Optimizer);
    adam.cost.kind = "adam_update";
    EXPECT_NEAR(opTime(adam, host, Precision::Fp32, 32e6).seconds, 1e-6 + 1.75 * 28e6 / 25e9, 1e-12);
    const OpDesc relu = elementwise(1e6, 1.0, 2);
    EXPECT_NEAR(opTime(relu, host, Precision::Fp32, 32e6).seconds, 1e-6 + 8e6 / 25e9, 1e-12);
}

TEST(DeviceTiming, StepTimeTakesTheSpillFromTheGraphsParameters) {
    KernelRates rates;
    rates.threads = 1;
    rates.kinds["inner_product_forward"] = {0.0, 1.0 / 80e9, 1.0 / 40e9, 4};
    rates.other = {0.0, 0.0, 1.0 / 25e9, 9};
    rates.cache_bytes = 8e6;
    rates.spill_slowdown = 2.0;
    const DeviceSpec host = device("cpu-host").withCalibration(100.0, 10.0, 8 * kGiB, rates);
    OpGraph g;
    g.ops.push_back(matmul(128, 512, 784));
    g.activation_bytes = 1e9;  // activations are not what spills
    const double inCache = stepTime(g, host, Precision::Fp32).seconds;
    EXPECT_NEAR(inCache, g.ops[0].cost.flops / 80e9 + g.ops[0].cost.bytes / 40e9, 1e-12);
    g.params_bytes = 4e6;
    g.grads_bytes = 4e6;
    g.optimizer_bytes = 8e6;  // 16 MB against 8 MB of cache: half spills, bytes 2x as slow
    EXPECT_NEAR(stepTime(g, host, Precision::Fp32).seconds,
                g.ops[0].cost.flops / 80e9 + 2.0 * g.ops[0].cost.bytes / 40e9, 1e-12);
}

TEST(DeviceTiming, CalibratedHostStepsPayTheirMeasuredTimeOutsideTheOps) {
    KernelRates rates;
    rates.threads = 1;
    rates.other = {0.0, 0.0, 1.0 / 25e9, 9};
    rates.step_overhead_s = 10e-6;
    rates.step_overhead_per_activation_byte_s = 5e-12;
    const DeviceSpec host = device("cpu-host").withCalibration(100.0, 10.0, 8 * kGiB, rates);
    OpGraph g;
    g.ops.push_back(elementwise(1e6, 1.0, 2));
    g.activation_bytes = 20e6;
    const StepTiming s = stepTime(g, host, Precision::Fp32);
    EXPECT_NEAR(s.overhead_s, 10e-6 + 100e-6, 1e-12);
    EXPECT_NEAR(s.seconds, 8e6 / 25e9 + 110e-6, 1e-12);
}

TEST(DeviceTiming, StepSumsPartsPlusPerStepOverhead) {
    OpGraph g;
    g.ops.push_back(matmul(1024, 1024, 1024, StepPart::Forward, 2));  // 34.86 us + 1 us each
    g.ops.push_back(matmul(100, 100, 100, StepPart::Backward));       // memory-bound: 60 kB / 450 GB/s + 1 us
    OpDesc adam = elementwise(1e6, 10.0, 4, StepPart::Optimizer);     // 16 MB, not halved: fp32 master weights
    adam.cost.kind = "adam_update";
    g.ops.push_back(adam);
    const StepTiming s = stepTime(g, device("tpu-v3"), Precision::Bf16);
    EXPECT_DOUBLE_EQ(s.forward_s, 2 * (3.485957446808511e-05 + 1e-6));
    EXPECT_DOUBLE_EQ(s.backward_s, 60000.0 / 450e9 + 1e-6);
    EXPECT_DOUBLE_EQ(s.optimizer_s, 16e6 / 450e9 + 1e-6);
    EXPECT_EQ(s.overhead_s, 1e-3);
    EXPECT_DOUBLE_EQ(s.seconds, 0.0011094080378250592);
    EXPECT_DOUBLE_EQ(s.compute_bound_s, s.forward_s);
    EXPECT_DOUBLE_EQ(s.memory_bound_s, s.backward_s + s.optimizer_s);
    // MXU utilisation weighted by the matrix ops' time: 1.0 for 71.7 us, 0.587 for 1.13 us.
    EXPECT_DOUBLE_EQ(s.matrix_utilisation, 0.9935732233683274);
    ASSERT_EQ(s.ops.size(), 3u);
    EXPECT_EQ(s.ops[2].bytes, 16e6);
}

TEST(DeviceMemory, OverCapacityFailsLikeTheDevice) {
    OpGraph g;
    g.params_bytes = 0.1 * kGiB;
    g.grads_bytes = 0.1 * kGiB;
    g.optimizer_bytes = 0.2 * kGiB;
    g.activation_bytes = 17.8 * kGiB;
    const MemoryCheck c = checkMemory(g, device("tpu-v3"), Precision::Fp32);
    EXPECT_FALSE(c.fits);
    EXPECT_DOUBLE_EQ(c.capacity_bytes, 16 * kGiB);
    EXPECT_EQ(c.message,
              "out of memory on tpu-v3 core: needs 18.2 GiB of 16.0 GiB HBM \u2014 parameters 0.10, gradients 0.10, "
              "optimizer state 0.20, activations 17.8 GiB");
    // The same model fits a v4 chip's 32 GiB, and a v3 core in bf16 (activations halved to 8.9 GiB).
    EXPECT_TRUE(checkMemory(g, device("tpu-v4"), Precision::Fp32).fits);
    const MemoryCheck bf16 = checkMemory(g, device("tpu-v3"), Precision::Bf16);
    EXPECT_TRUE(bf16.fits);
    EXPECT_NEAR(bf16.needed_bytes, 9.3 * kGiB, 1.0);
    EXPECT_EQ(bf16.message, "");
    // On a GPU the replica is the GPU.
    EXPECT_EQ(checkMemory(g, device("v100-sxm2-16gb"), Precision::Fp32)
                  .message.rfind("out of memory on v100-sxm2-16gb: needs 18.2 GiB of 16.0 GiB HBM \u2014", 0),
              0u);
}

TEST(DeviceMemory, NinetyPercentIsNearCapacity) {
    OpGraph g;
    g.params_bytes = 64.0 * 1024 * 1024;
    g.activation_bytes = 14.5 * kGiB;
    const MemoryCheck near = checkMemory(g, device("tpu-v3"), Precision::Fp32);
    EXPECT_TRUE(near.fits);
    EXPECT_TRUE(near.near_capacity);
    EXPECT_NEAR(near.fraction, (14.5 + 0.0625) / 16.0, 1e-12);
    EXPECT_EQ(near.message,
              "near capacity on tpu-v3 core: 14.6 GiB of 16.0 GiB HBM (91 %) \u2014 parameters 0.06, gradients 0.00, "
              "optimizer state 0.00, activations 14.5 GiB; memory-bound (capacity)");
    g.activation_bytes = 14.0 * kGiB;  // 87.9 %
    EXPECT_FALSE(checkMemory(g, device("tpu-v3"), Precision::Fp32).near_capacity);
    EXPECT_THROW(checkMemory(g, device("cpu-host"), Precision::Fp32), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine
