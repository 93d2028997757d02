// End to end: `trainbench-cli estimate --inference` prices serving ResNet-50 (the shape-only
// experiment) on every fixed-figure catalog device at each batch and precision, says why a device
// cannot run a precision, and rejects a precision it does not know.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/integration/clirunner.h"

using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

const std::string kFile = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/resnet50-imagenet-estimate.json";

const nlohmann::json& row(const nlohmann::json& rows, const std::string& device, const std::string& precision,
                          int batch) {
    for (const auto& r : rows)
        if (r["device"] == device && r["precision"] == precision && r["batch"] == batch) return r;
    static const nlohmann::json none;
    ADD_FAILURE() << "no row " << device << " " << precision << " " << batch;
    return none;
}

}  // namespace

TEST(CliInferenceEstimate, EveryDevicePrecisionAndBatchOfResNet50) {
    TempDir tmp;
    auto r = runCli({"estimate", kFile, "--inference", "--batch", "1,256", "--precision", "fp32,int8", "--json"},
                    tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    EXPECT_EQ(rows.size(), 10u * 2 * 2);  // the catalog's devices but cpu-host (calibrated) x precisions x batches
    for (const auto& e : rows) {
        if (!e["fits"].get<bool>()) continue;
        // Cost per million predictions: the replica's price per hour x seconds per example x 1e6.
        EXPECT_NEAR(e["usd_per_million"].get<double>(),
                    e["price_per_hour"].get<double>() / 3600 * e["latency_seconds"].get<double>() /
                        e["batch"].get<int>() * 1e6,
                    1e-12);
    }
    // ResNet-50's 25.6 M parameters: about 102 MB in fp32, a quarter in int8.
    const auto& fp32 = row(rows, "a100-sxm4-40gb", "fp32", 256);
    const auto& int8 = row(rows, "a100-sxm4-40gb", "int8", 256);
    EXPECT_NEAR(fp32["weight_bytes"].get<double>() / int8["weight_bytes"].get<double>(), 4.0, 1e-9);
    EXPECT_LT(int8["latency_seconds"].get<double>(), fp32["latency_seconds"].get<double>());
    // Larger batches amortise the per-step overhead.
    EXPECT_GT(fp32["examples_per_second"].get<double>(),
              row(rows, "a100-sxm4-40gb", "fp32", 1)["examples_per_second"].get<double>());
    const auto& v100 = row(rows, "v100-sxm2-16gb", "int8", 1);
    EXPECT_FALSE(v100["fits"].get<bool>());
    EXPECT_EQ(v100["why_not"], "v100-sxm2-16gb has no int8 matrix rate");
    EXPECT_TRUE(row(rows, "tpu-v4", "int8", 1)["fits"].get<bool>());
}

TEST(CliInferenceEstimate, TableSaysWhatItCannotRunAndWhatItLeftOut) {
    TempDir tmp;
    auto r = runCli({"estimate", kFile, "--inference", "--batch", "8", "--precision", "int8"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("$/1M predictions"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cpu-host: not estimated"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(cannot run)"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("tpu-v3 core int8: tpu-v3 has no int8 matrix rate"), std::string::npos) << r.err;
    auto bad = runCli({"estimate", kFile, "--inference", "--precision", "int4"}, tmp.path);
    EXPECT_EQ(bad.exitCode, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("unknown inference precision 'int4'; must be one of 'fp32', 'bf16', 'int8'"),
              std::string::npos)
        << bad.err;
}

// The edge devices: a bought device is priced by purchase / life + power x electricity (here the
// user's), the Edge TPU refuses fp32 with the reason and streams ResNet-50's int8 parameters beyond
// its 8 MiB of on-chip memory from the host, and the table says so.
TEST(CliInferenceEstimate, EdgeDevicesArePricedByOwnershipAndTheEdgeTpuStreams) {
    TempDir tmp;
    auto r = runCli({"estimate", kFile, "--inference", "--batch", "1", "--precision", "fp32,int8", "--json",
                     "--service-years", "5", "--usd-per-kwh", "0.3"},
                    tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    const auto& pi = row(rows, "rpi4-4gb", "fp32", 1);
    EXPECT_TRUE(pi["fits"].get<bool>()) << pi;
    EXPECT_DOUBLE_EQ(pi["price_per_hour"].get<double>(), 55.0 / (5 * 365.25 * 24) + 0.003 * 0.3);
    EXPECT_DOUBLE_EQ(row(rows, "snapdragon-8-gen-2", "fp32", 1)["price_per_hour"].get<double>(),
                     799.99 / (5 * 365.25 * 24) + 0.005 * 0.3);
    EXPECT_EQ(row(rows, "rpi4-4gb", "int8", 1)["why_not"], "rpi4-4gb has no int8 matrix rate");
    EXPECT_EQ(row(rows, "edge-tpu-usb", "fp32", 1)["why_not"],
              "edge-tpu-usb runs int8 only: quantize the model (trainbench-cli quantize)");
    const auto& tpu = row(rows, "edge-tpu-usb", "int8", 1);
    ASSERT_TRUE(tpu["fits"].get<bool>()) << tpu;
    const double weights = tpu["weight_bytes"].get<double>();  // ResNet-50's 25.6 M parameters in int8
    EXPECT_GT(weights, 24e6);
    EXPECT_DOUBLE_EQ(tpu["streamed_bytes"].get<double>(), weights - 8 * 1048576.0);
    EXPECT_DOUBLE_EQ(tpu["stream_seconds"].get<double>(), (weights - 8 * 1048576.0) / 0.5e9);
    EXPECT_GT(tpu["latency_seconds"].get<double>(), tpu["stream_seconds"].get<double>());

    auto table = runCli({"estimate", kFile, "--inference", "--batch", "1", "--precision", "int8"}, tmp.path);
    ASSERT_EQ(table.exitCode, 0) << table.err << table.out;
    EXPECT_NE(table.out.find("edge-tpu-usb int8: parameters"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("streamed from the host over its link per invocation"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("rpi4-4gb: bought, $55.00 over 3 years + 3 W at $0.160/kWh"), std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("streams "), std::string::npos) << table.out;

    auto zero = runCli({"estimate", kFile, "--inference", "--service-years", "0"}, tmp.path);
    EXPECT_EQ(zero.exitCode, 2) << zero.out;
    EXPECT_NE(zero.err.find("--service-years"), std::string::npos) << zero.err;
}
