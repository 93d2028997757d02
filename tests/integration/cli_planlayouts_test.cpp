// End to end: `trainbench-cli plan-layouts` splits GPT-3 175B (experiments/models/gpt3-175b.json) over 1,024
// A100 80 GB and a GPT-style decoder read from ONNX over 8, prints the per-layout figures and the
// rejected layouts with why, and refuses bad input naming what and where.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/integration/clirunner.h"

using nlohmann::json;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
using trainbench::testing::writeFile;

namespace {

const std::string kGpt3File = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/models/gpt3-175b.json";
const std::string kGptSmallOnnx = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/full/gpt_small.onnx";

}  // namespace

TEST(CliPlanLayouts, Gpt3On1024A100sRanksTheReportedMeshAmongTheBestThreeAndSaysWhyOthersAreRejected) {
    TempDir tmp;
    const auto r = runCli({"plan-layouts", kGpt3File, "--device", "a100-sxm4-80gb", "--count", "1024", "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["global_batch"], 1536);  // the file's
    EXPECT_EQ(out["search"], "fast");
    EXPECT_LE(out["evaluated"].get<double>(), 0.1 * out["candidates"].get<double>());
    ASSERT_FALSE(out["ranked"].empty());
    std::set<std::tuple<int, int, int>> meshes;
    for (const json& row : out["ranked"]) {
        EXPECT_LE(row["memory_bytes"].get<double>(), row["capacity_bytes"].get<double>());
        if (meshes.size() < 3) meshes.insert({row["data"].get<int>(), row["pipeline"].get<int>(), row["tensor"].get<int>()});
    }
    EXPECT_TRUE(meshes.count({8, 16, 8})) << out["ranked"].dump(1);
    bool memory = false, heads = false;
    for (const json& x : out["rejected"]) {
        memory = memory || x["why"].get<std::string>().rfind("memory ", 0) == 0;
        heads = heads || x["why"].get<std::string>().find("does not divide 96 heads") != std::string::npos;
    }
    EXPECT_TRUE(memory);
    EXPECT_TRUE(heads);

    // The table: Calculon's columns, the meshes, the search and the rejected section.
    const auto text = runCli({"plan-layouts", kGpt3File, "--device", "a100-sxm4-80gb", "--count", "1024", "--top", "3"}, tmp.path);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    for (const char* s : {"COMPUTE", "RECOMP", "BUBBLE", "TP", "PP", "DP", "WEIGHTS", "GRADS", "OPTIM", "ACTIV",
                          "best of each d x p x t:", "search: fast,", "rejected ("})
        EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
}

TEST(CliPlanLayouts, ADecoderFromOnnxIsSplitLikeAnyModel) {
    TempDir tmp;
    const auto r = runCli({"plan-layouts", kGptSmallOnnx, "--device", "a100-sxm4-80gb", "--count", "8", "--global-batch", "64",
                           "--exhaustive", "--json"},
                          tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["model"]["layers"], 4);
    EXPECT_EQ(out["model"]["heads"], 4);
    EXPECT_EQ(out["model"]["parameters"], 933120);
    EXPECT_EQ(out["evaluated"], out["candidates"]);
    EXPECT_FALSE(out["ranked"].empty());
    // An ONNX model has no batch of its own.
    const auto noBatch = runCli({"plan-layouts", kGptSmallOnnx, "--device", "a100-sxm4-80gb", "--count", "8"}, tmp.path);
    EXPECT_EQ(noBatch.exitCode, 2);
    EXPECT_NE(noBatch.err.find("--global-batch: the model file"), std::string::npos) << noBatch.err;
}

TEST(CliPlanLayouts, BadInputIsRefusedNamingWhatAndWhere) {
    TempDir tmp;
    auto r = runCli({"plan-layouts", kGpt3File, "--device", "a100-sxm4-8gb", "--count", "8"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown device 'a100-sxm4-8gb'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'a100-sxm4-80gb'?"), std::string::npos) << r.err;
    r = runCli({"plan-layouts", kGpt3File, "--device", "tpu-v3", "--count", "8"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("tpu-v3 is a tpu"), std::string::npos) << r.err;
    r = runCli({"plan-layouts", kGpt3File, "--device", "a100-sxm4-80gb", "--count", "1031"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("no layout of 1031 devices can split gpt3-175b at batch 1536"), std::string::npos) << r.err;
    const std::string bad = writeFile(tmp.path / "gpt.json", R"({"layers": 96, "hiden": 12288, "heads": 96, "sequence": 2048, "vocab": 51200})");
    r = runCli({"plan-layouts", bad, "--device", "a100-sxm4-80gb", "--count", "8"}, tmp.path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(bad + ": hiden: unknown key; did you mean 'hidden'?"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(bad + ": hidden: missing; expected a positive integer"), std::string::npos) << r.err;

    // Layouts exist but none fits: exit 1, and the splits one replica would need.
    r = runCli({"plan-layouts", kGpt3File, "--device", "a100-sxm4-80gb", "--count", "8"}, tmp.path);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("no layout of 8 x a100-sxm4-80gb fits memory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("recompute full      one replica fits on"), std::string::npos) << r.err;
}
