// The edge devices of the catalog (a Raspberry Pi 4, a Snapdragon 8 Gen 2 phone, a Coral Edge TPU)
// against figures worked out by hand from their catalog entries: latency on the roofline, what a
// bought device costs per hour (purchase / life + power x electricity), the Edge TPU's int8-only
// refusal and the parameters it streams from its host when they exceed its on-chip memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/inferenceestimate.h"
#include "tests/engine/denseforward.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

using test::device;

constexpr int64_t kBatch = 256, kIn = 1024, kOut = 512;
constexpr double kFlops = 2.0 * kBatch * kIn * kOut;                      // 268,435,456
constexpr double kFp32Bytes = 4.0 * (kBatch * kIn + kIn * kOut + kBatch * kOut);  // 3,670,016
constexpr double kHoursIn3Years = 3 * 365.25 * 24;                        // 26,298

OpGraph denseForward() { return testing::denseForward(kBatch, kIn, kOut); }

TEST(EdgeDevices, RaspberryPi4IsTheRooflineAndItsHourIsPurchaseOverLifePlusPower) {
    const DeviceSpec& pi = device("rpi4-4gb");
    // $55 over 3 years + 3 W at $0.16/kWh = 0.0020914 + 0.00048 = $0.0025714 per hour.
    EXPECT_DOUBLE_EQ(pi.price_per_hour, 55.0 / kHoursIn3Years + 0.003 * 0.16);
    EXPECT_EQ(pi.price_unit, "device");
    const InferenceEstimate e = estimateInference(denseForward(), pi, Precision::Fp32);
    ASSERT_TRUE(e.fits) << e.why_not;
    const double compute = kFlops / 48e9;       // 5.59 ms at 48 GFLOP/s
    const double memory = kFp32Bytes / 12.8e9;  // 0.29 ms at 12.8 GB/s
    EXPECT_DOUBLE_EQ(e.seconds, std::max(compute, memory) + 10e-6 + 50e-6);  // per-op 10 us, per-step 50 us
    EXPECT_NEAR(e.seconds, 5.6524e-3, 1e-7);
    EXPECT_DOUBLE_EQ(e.usd_per_million, pi.price_per_hour / 3600.0 * e.seconds / 256.0 * 1e6);
    EXPECT_NEAR(e.usd_per_million, 1.577e-5, 1e-8);  // $0.0026/h x 22 us per example: 0.0016 cents per million
    // No int8 rate is published for the Cortex-A72: int8 is not offered rather than invented.
    const InferenceEstimate int8 = estimateInference(denseForward(), pi, Precision::Int8);
    EXPECT_FALSE(int8.fits);
    EXPECT_EQ(int8.why_not, "rpi4-4gb has no int8 matrix rate");
}

TEST(EdgeDevices, SnapdragonCpuIsTheRoofline) {
    const DeviceSpec& phone = device("snapdragon-8-gen-2");
    EXPECT_DOUBLE_EQ(phone.price_per_hour, 799.99 / kHoursIn3Years + 0.005 * 0.16);
    const InferenceEstimate e = estimateInference(denseForward(), phone, Precision::Fp32);
    ASSERT_TRUE(e.fits) << e.why_not;
    const double compute = kFlops / 329.6e9;    // 0.814 ms
    const double memory = kFp32Bytes / 67.2e9;  // 0.055 ms
    EXPECT_DOUBLE_EQ(e.seconds, std::max(compute, memory) + 5e-6 + 50e-6);
    EXPECT_NEAR(e.seconds, 0.869428e-3, 1e-9);
    EXPECT_DOUBLE_EQ(e.usd_per_million, phone.price_per_hour / 3600.0 * e.seconds / 256.0 * 1e6);
    EXPECT_FALSE(estimateInference(denseForward(), phone, Precision::Int8).fits);
}

TEST(EdgeDevices, EdgeTpuRunsInt8AtFourTops) {
    const DeviceSpec& tpu = device("edge-tpu-usb");
    EXPECT_EQ(tpu.kind, DeviceKind::Npu);
    EXPECT_DOUBLE_EQ(tpu.price_per_hour, 75.0 / kHoursIn3Years + 0.002 * 0.16);
    const InferenceEstimate e = estimateInference(denseForward(), tpu, Precision::Int8);
    ASSERT_TRUE(e.fits) << e.why_not;
    EXPECT_EQ(e.weight_bytes, 512.0 * 1024);  // 0.5 MiB of int8 weights: within the 8 MiB on chip
    EXPECT_EQ(e.streamed_bytes, 0.0);
    EXPECT_TRUE(e.note.empty()) << e.note;
    const double compute = kFlops / 4e12;             // 67.1 us at 4 TOPS
    const double memory = kFp32Bytes / 4.0 / 32e9;    // 28.7 us: int8 bytes over the on-chip 32 GB/s
    EXPECT_DOUBLE_EQ(e.seconds, std::max(compute, memory) + 1e-6 + 250e-6);  // per-op 1 us, per invocation 250 us
    EXPECT_DOUBLE_EQ(e.usd_per_million, tpu.price_per_hour / 3600.0 * e.seconds / 256.0 * 1e6);
}

TEST(EdgeDevices, EdgeTpuRefusesFloatingPointWithTheReason) {
    for (Precision p : {Precision::Fp32, Precision::Bf16}) {
        const InferenceEstimate e = estimateInference(denseForward(), device("edge-tpu-usb"), p);
        EXPECT_FALSE(e.fits);
        EXPECT_EQ(e.seconds, 0.0);
        EXPECT_EQ(e.why_not, "edge-tpu-usb runs int8 only: quantize the model (trainbench-cli quantize)");
    }
}

TEST(EdgeDevices, EdgeTpuStreamsTheParametersBeyondItsOnChipMemoryOverTheLink) {
    OpGraph g = denseForward();
    g.params_bytes = 4.0 * 20 * 1048576;  // 20 MiB of int8 weights; 8 MiB fit on chip
    const InferenceEstimate small = estimateInference(denseForward(), device("edge-tpu-usb"), Precision::Int8);
    const InferenceEstimate e = estimateInference(g, device("edge-tpu-usb"), Precision::Int8);
    ASSERT_TRUE(e.fits) << e.why_not;  // it runs, slowly, as the Edge TPU compiler arranges it
    EXPECT_EQ(e.streamed_bytes, 12.0 * 1048576);
    EXPECT_DOUBLE_EQ(e.stream_seconds, 12.0 * 1048576 / 0.5e9);  // 25.2 ms over USB 3's 0.5 GB/s per invocation
    EXPECT_DOUBLE_EQ(e.seconds, small.seconds + e.stream_seconds);
    EXPECT_EQ(e.note,
              "parameters 20.0 MiB exceed the 8.0 MiB of on-chip memory: 12.0 MiB streamed from the host over its "
              "link per invocation (one batch)");
}

TEST(EdgeDevices, OwnershipCostTakesTheUsersLifeAndElectricityPrice) {
    const DeviceSpec pi = device("rpi4-4gb").withOwnershipCost(5.0, 0.30);
    EXPECT_DOUBLE_EQ(pi.price_per_hour, 55.0 / (5 * 365.25 * 24) + 0.003 * 0.30);
    EXPECT_EQ(pi.ownership->usd_per_kwh, 0.30);
    // Either alone keeps the other.
    EXPECT_DOUBLE_EQ(device("rpi4-4gb").withOwnershipCost(std::nullopt, 0.0).price_per_hour, 55.0 / kHoursIn3Years);
    EXPECT_DOUBLE_EQ(device("rpi4-4gb").withOwnershipCost(1.0, std::nullopt).price_per_hour,
                     55.0 / (365.25 * 24) + 0.003 * kDefaultUsdPerKwh);
    EXPECT_THROW(device("rpi4-4gb").withOwnershipCost(0.0, std::nullopt), std::invalid_argument);
    EXPECT_THROW(device("rpi4-4gb").withOwnershipCost(std::nullopt, -0.1), std::invalid_argument);
    try {
        (void)device("a100-sxm4-40gb").withOwnershipCost(5.0, std::nullopt);
        ADD_FAILURE() << "a rented device has no service life";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a100-sxm4-40gb is rented"), std::string::npos) << e.what();
    }
}

// The reader's rules for the new keys: an npu has no floating-point rate and needs its link; a
// bought device has a purchase price and no hourly one.
TEST(EdgeDevices, CatalogRulesForAnNpuAndABoughtDevice) {
    nlohmann::json c = nlohmann::json::parse(DeviceCatalog::builtinText());
    nlohmann::json& devices = c["devices"];
    nlohmann::json tpu, pi;
    for (const auto& d : devices) {
        if (d["id"] == "edge-tpu-usb") tpu = d;
        if (d["id"] == "rpi4-4gb") pi = d;
    }
    tpu["compute"]["peak_fp32_tflops"] = 1;
    tpu["npu"].erase("host_link_gbs");
    pi["price"]["usd_per_hour"] = 0.01;
    pi["npu"] = {{"host_link_gbs", 1}};
    c["devices"] = nlohmann::json::array({tpu, pi});
    try {
        DeviceCatalog::parse(c.dump(), "mine.json");
        ADD_FAILURE() << "expected DeviceCatalogError";
    } catch (const DeviceCatalogError& e) {
        const std::string what = e.what();
        for (const char* expected :
             {"mine.json: devices[0].compute.peak_fp32_tflops: an npu computes int8 only: expected null",
              "mine.json: devices[0].npu: missing key 'host_link_gbs'",
              "mine.json: devices[1].npu: applies only to kind 'npu' (an int8 inference accelerator)",
              "mine.json: devices[1].price.usd_per_hour: a bought device (purchase_usd) has no hourly price"})
            EXPECT_NE(what.find(expected), std::string::npos) << expected << "\nin:\n" << what;
    }
}

}  // namespace
}  // namespace trainbench::engine
