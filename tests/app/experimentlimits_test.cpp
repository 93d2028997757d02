// The limits of experiment files and --set values (docs/experiment-format.md, "Limits"): a text
// over the size or nesting limit is refused before it is parsed, with the file, the position and
// the key path; a sweep of more points than allowed is refused before any value is compared or
// copied. Texts just within the limits get through to validation.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "app/experiment/jsontext.h"
#include "app/experiment/sweep.h"
#include "experimenttesting.h"

namespace trainbench::app {
namespace {

using testing::errorOf;
using testing::withModel;

constexpr std::size_t kDepth = kExperimentLimits.maxDepth;
constexpr std::size_t kBytes = kExperimentLimits.maxBytes;

// `levels` nested arrays around 1.
std::string nested(std::size_t levels) { return std::string(levels, '[') + "1" + std::string(levels, ']'); }

std::string repeated(const std::string& s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

TEST(ExperimentLimits, NestingOverTheLimitIsRefusedWithFilePositionAndKeyPath) {
    // Half a million levels (1 MB) under an unknown key, and an override: copying the document for the override
    // overflowed the stack before there was a limit.
    const std::string prefix = R"({"model": {"preset": "mlp"}, "x": )";
    const std::string text = prefix + nested(500'000) + "}";
    const std::string error = errorOf(text, {"train.epochs=2"});
    const std::size_t offset = prefix.size() + kDepth - 1;  // the '[' that opens level kDepth + 1
    EXPECT_EQ(error, "test.json:1:" + std::to_string(offset + 1) + ": nesting deeper than " + std::to_string(kDepth) +
                         " levels of { and [ (byte " + std::to_string(offset) + ", at x" + repeated("[0]", kDepth - 1) + ")");
    // At the limit, the text is parsed and validated as usual.
    EXPECT_EQ(errorOf(prefix + nested(kDepth - 1) + "}", {"train.epochs=2"}).find("nesting"), std::string::npos);
    EXPECT_NE(errorOf(prefix + nested(kDepth - 1) + "}").find("test.json: x: unknown key"), std::string::npos);
}

TEST(ExperimentLimits, NestingIsFoundOnItsLineAndInsideAList) {
    const std::string text = "{\n  \"model\": {\"preset\": \"mlp\"},\n  \"sweep\": {\"seed\": [1, " + nested(kDepth) + "]}\n}";
    // Levels: the file, sweep, seed, then 29 of the nested lists; the 30th opens level 33.
    const std::size_t offset = text.find("[[") + kDepth - 3;
    EXPECT_EQ(errorOf(text), "test.json:3:" + std::to_string(offset - text.rfind('\n', offset)) +
                                 ": nesting deeper than 32 levels of { and [ (byte " + std::to_string(offset) +
                                 ", at sweep.seed[1]" + repeated("[0]", kDepth - 3) + ")");
}

TEST(ExperimentLimits, ASetValueGetsTheSameLimitsBeforeItIsParsed) {
    const std::string deep = "seed=" + nested(500'000);
    const std::string error = errorOf(withModel(), {deep, "train.epochs=2"});
    EXPECT_EQ(error, "test.json: --set seed=" + std::string(72, '[') + "...: in the value: nesting deeper than 32 levels "
                     "of { and [ (byte 32, at " + repeated("[0]", kDepth) + ")");
    EXPECT_NE(errorOf(withModel(), {"seed=" + nested(kDepth)}).find("seed: expected"), std::string::npos);
    const std::string big = "name=\"" + std::string(kBytes, 'x') + "\"";
    EXPECT_NE(errorOf(withModel(), {big}).find("in the value: is " + std::to_string(kBytes + 2) +
                                               " bytes, over the limit of " + std::to_string(kBytes) + " bytes"),
              std::string::npos);
}

TEST(ExperimentLimits, AFileOverTheSizeLimitIsRefusedBeforeItIsRead) {
    const std::string dir = ::testing::TempDir() + "experimentlimits-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/big.json";
    const std::string valid = withModel();
    {
        std::ofstream(path, std::ios::binary) << valid << std::string(kBytes - valid.size(), ' ');
    }
    EXPECT_EQ(loadExperimentFile(path).model.preset, "mlp");  // exactly at the limit
    {
        std::ofstream(path, std::ios::binary | std::ios::app) << ' ';
    }
    try {
        loadExperimentFile(path);
        ADD_FAILURE() << "expected an ExperimentError";
    } catch (const ExperimentError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": is " + std::to_string(kBytes + 1) + " bytes, over the limit of " +
                                             std::to_string(kBytes) + " bytes");
    }
    // The same text from an editor (the GUI parses text).
    EXPECT_EQ(errorOf(valid + std::string(kBytes + 1 - valid.size(), ' ')),
              "test.json: is " + std::to_string(kBytes + 1) + " bytes, over the limit of " + std::to_string(kBytes) + " bytes");
    std::filesystem::remove_all(dir);
}

// The values of a sweep are compared with each other while the file is validated; a list of
// 100,000 seeds took 5 * 10^9 comparisons before its size was checked.
TEST(ExperimentLimits, ASweepOfTooManyPointsIsRefusedBeforeItsValuesAreChecked) {
    std::string seeds;
    for (int i = 0; i < 100'000; ++i) seeds += (i ? "," : "") + std::to_string(i);
    const auto start = std::chrono::steady_clock::now();
    const std::string error = errorOf(withModel(R"("sweep": {"seed": [)" + seeds + "]},"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    EXPECT_EQ(error, "test.json: sweep: has more than " + std::to_string(kMaxSweepPoints) +
                         " points (the product of the lists' lengths); split it");
    // 1000 points (10 x 100) are a valid sweep.
    std::string hundred;
    for (int i = 0; i < 100; ++i) hundred += (i ? "," : "") + std::to_string(i);
    const Experiment base =
        parseExperiment(withModel(R"("sweep": {"seed": [)" + hundred + R"(], "train.epochs": [1,2,3,4,5,6,7,8,9,10]},)"),
                        "test.json");
    EXPECT_EQ(base.model.preset, "mlp");
}

}  // namespace
}  // namespace trainbench::app
