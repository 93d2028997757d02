// Inference on the emulated devices against closed forms worked out by hand from the catalog's
// figures: a forward pass takes max(FLOPs / matrix rate, bytes / bandwidth) + per-op overhead per
// op, plus the per-step overhead; int8 charges the int8 rate and a quarter of the bytes; the cost
// per million predictions is price per hour / 3600 x seconds per example x 1e6.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/inferenceestimate.h"
#include "tests/engine/denseforward.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

using test::device;

constexpr int64_t kBatch = 256, kIn = 1024, kOut = 512;

OpGraph denseForward() { return testing::denseForward(kBatch, kIn, kOut); }

TEST(InferenceEstimate, Fp32OnA100IsTheRoofline) {
    const InferenceEstimate e = estimateInference(denseForward(), device("a100-sxm4-40gb"), Precision::Fp32);
    ASSERT_TRUE(e.fits) << e.why_not;
    const double compute = 2.0 * 256 * 1024 * 512 / 19.5e12;                    // 13.77 us at 19.5 TFLOP/s
    const double memory = 4.0 * (256 * 1024 + 1024 * 512 + 256 * 512) / 1555e9;  // 2.36 us at 1,555 GB/s
    EXPECT_DOUBLE_EQ(e.seconds, std::max(compute, memory) + 5e-6 + 100e-6);      // per-op 5 us, per-step 100 us
    EXPECT_DOUBLE_EQ(e.examples_per_s, 256.0 / e.seconds);
    EXPECT_DOUBLE_EQ(e.usd_per_million, 4.0966 / 3600.0 * e.seconds / 256.0 * 1e6);
    EXPECT_EQ(e.weight_bytes, 4.0 * 1024 * 512);
}

TEST(InferenceEstimate, Int8OnA100ChargesTheInt8RateAndAQuarterOfTheBytes) {
    const InferenceEstimate fp32 = estimateInference(denseForward(), device("a100-sxm4-40gb"), Precision::Fp32);
    const InferenceEstimate int8 = estimateInference(denseForward(), device("a100-sxm4-40gb"), Precision::Int8);
    ASSERT_TRUE(int8.fits) << int8.why_not;
    const double compute = 2.0 * 256 * 1024 * 512 / 624e12;
    const double memory = 1.0 * (256 * 1024 + 1024 * 512 + 256 * 512) / 1555e9;
    EXPECT_DOUBLE_EQ(int8.seconds, std::max(compute, memory) + 5e-6 + 100e-6);
    EXPECT_LT(int8.seconds, fp32.seconds);
    EXPECT_LT(int8.usd_per_million, fp32.usd_per_million);
    EXPECT_EQ(int8.weight_bytes, 1024.0 * 512);
}

TEST(InferenceEstimate, APrecisionTheDeviceLacksSaysWhyInsteadOfThrowing) {
    const InferenceEstimate e = estimateInference(denseForward(), device("v100-sxm2-16gb"), Precision::Int8);
    EXPECT_FALSE(e.fits);
    EXPECT_EQ(e.seconds, 0.0);
    EXPECT_EQ(e.why_not, "v100-sxm2-16gb has no int8 matrix rate");
    const InferenceEstimate tpu = estimateInference(denseForward(), device("tpu-v3"), Precision::Int8);
    EXPECT_FALSE(tpu.fits);
    EXPECT_NE(tpu.why_not.find("the MXU multiplies bf16"), std::string::npos) << tpu.why_not;
}

TEST(InferenceEstimate, AModelOverTheReplicasMemoryDoesNotFitAndSaysBy) {
    OpGraph g = denseForward();
    g.params_bytes = 20.0 * 1073741824.0;  // 20 GiB of fp32 weights; a v3 core holds 16 GiB
    const InferenceEstimate fp32 = estimateInference(g, device("tpu-v3"), Precision::Fp32);
    EXPECT_FALSE(fp32.fits);
    EXPECT_NE(fp32.why_not.find("weights 20480.0 MiB"), std::string::npos) << fp32.why_not;
    EXPECT_NE(fp32.why_not.find("tpu-v3 core has 16384.0 MiB of HBM"), std::string::npos) << fp32.why_not;
    // In bf16 the same weights are 10 GiB and fit.
    EXPECT_TRUE(estimateInference(g, device("tpu-v3"), Precision::Bf16).fits);
}

TEST(InferenceEstimate, InferencePrecisionsAreFp32Bf16AndInt8) {
    EXPECT_EQ(parseInferencePrecision("int8"), Precision::Int8);
    EXPECT_EQ(parseInferencePrecision("bf16"), Precision::Bf16);
    EXPECT_THROW(parseInferencePrecision("tf32"), std::invalid_argument);
    // Training never runs in int8.
    EXPECT_THROW(parsePrecision("int8"), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine
