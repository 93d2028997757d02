// trainbench-cli quantize as a user runs it: a briefly trained W1 run becomes an int8 ONNX file whose
// test accuracy the command reports within half a point of fp32's, with weights >= 3.5x smaller, and
// whose metadata holds the calibration, the sizes and the accuracies it printed; bad input (no such
// run, no batches, a streaming training set, nowhere to write) is refused naming it, writing nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "engine/onnx/onnxquantized.h"
#include "tests/integration/clirunner.h"

namespace {

using trainbench::testing::runCli;
using trainbench::testing::TempDir;
namespace fs = std::filesystem;
namespace onnx = trainbench::engine::onnx;

// A W1 run of 40 steps on Fashion-MNIST that keeps its checkpoint, named "w1".
std::string trainW1(const TempDir& tmp, std::vector<std::string> more = {}) {
    const std::string db = (tmp.path / "runs.db").string();
    std::vector<std::string> args{"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--db", db, "-q",
                                  "--set", "train.max_steps=40", "--set", "train.checkpoint_at_end=true",
                                  "--set", "train.eval_every_steps=0", "--set", "name=w1"};
    args.insert(args.end(), more.begin(), more.end());
    const auto train = runCli(args, tmp.path);
    EXPECT_EQ(train.exitCode, 0) << train.err << train.out;
    return db;
}

TEST(CliQuantize, W1BecomesAnInt8OnnxFileThatKeepsItsAccuracyAndRecordsItsCalibration) {
    TempDir tmp;
    const std::string db = trainW1(tmp);
    const fs::path out = tmp.path / "w1-int8.onnx";
    const auto q = runCli({"quantize", "w1", "--calibration-batches", "4", "--seed", "11", "-o", out.string(), "--db", db}, tmp.path);
    ASSERT_EQ(q.exitCode, 0) << q.err << q.out;
    ASSERT_TRUE(fs::exists(out));
    EXPECT_NE(q.out.find("calibration: 4 batches x 64 = 256 training examples (seed 11), minmax"), std::string::npos) << q.out;
    EXPECT_NE(q.out.find("int8 ran on oneDNN ISA "), std::string::npos) << q.out;
    EXPECT_NE(q.out.find("test top-1 (10000 examples)"), std::string::npos) << q.out;

    // fp32  2143272  1.00x           74.80 %
    // int8  541264   3.96x smaller   74.79 %  -0.01 points
    std::smatch fp32, int8;
    ASSERT_TRUE(std::regex_search(q.out, fp32, std::regex(R"(\nfp32 +(\d+) +1\.00x +([0-9.]+) %)"))) << q.out;
    ASSERT_TRUE(std::regex_search(q.out, int8, std::regex(R"(\nint8 +(\d+) +([0-9.]+)x smaller +([0-9.]+) % +([-+][0-9.]+) points)")))
        << q.out;
    const double fp32Accuracy = std::stod(fp32[2]), int8Accuracy = std::stod(int8[3]);
    EXPECT_LE(std::abs(int8Accuracy - fp32Accuracy), 0.5) << q.out;
    EXPECT_GT(fp32Accuracy, 50.0) << q.out;  // a model that learned something: the comparison means something
    EXPECT_GE(std::stod(int8[2]), 3.5) << q.out;

    // The file holds what was printed, and reads back as an int8 model.
    const onnx::QuantizedModel m = onnx::readQuantizedOnnx(out.string());
    const auto& c = m.graph.calibration;
    EXPECT_EQ(c.batches, 4);
    EXPECT_EQ(c.batch_size, 64);
    EXPECT_EQ(c.examples, 256);
    EXPECT_EQ(c.method, "minmax");
    EXPECT_EQ(c.seed, 11u);
    EXPECT_TRUE(c.u8_levels == 127 || c.u8_levels == 255) << c.u8_levels;
    EXPECT_EQ(m.record.fp32_weight_bytes, std::stoll(fp32[1]));
    EXPECT_EQ(m.record.int8_weight_bytes, std::stoll(int8[1]));
    EXPECT_EQ(m.record.int8_weight_bytes, m.graph.weightBytes());
    EXPECT_EQ(m.record.test_examples, 10000);
    ASSERT_TRUE(m.record.fp32_accuracy && m.record.int8_accuracy);
    EXPECT_NEAR(100 * *m.record.fp32_accuracy, fp32Accuracy, 0.005);
    EXPECT_NEAR(100 * *m.record.int8_accuracy, int8Accuracy, 0.005);
    EXPECT_NE(m.graph.graph.metadata.source_run.find("(w1)"), std::string::npos) << m.graph.graph.metadata.source_run;
    EXPECT_FALSE(m.record.isa.empty());
}

TEST(CliQuantize, BadInputIsRefusedNamingItAndWritesNothing) {
    TempDir tmp;
    const std::string db = trainW1(tmp);
    const fs::path out = tmp.path / "q.onnx";
    const auto noRun = runCli({"quantize", "nosuch", "--calibration-batches", "4", "-o", out.string(), "--db", db}, tmp.path);
    EXPECT_EQ(noRun.exitCode, 2);
    EXPECT_NE(noRun.err.find("MODEL 'nosuch': there is no run 'nosuch'"), std::string::npos) << noRun.err;

    const auto zero = runCli({"quantize", "w1", "--calibration-batches", "0", "-o", out.string(), "--db", db}, tmp.path);
    EXPECT_EQ(zero.exitCode, 2);
    EXPECT_NE(zero.err.find("--calibration-batches must be at least 1, got 0"), std::string::npos) << zero.err;
    const auto negative = runCli({"quantize", "w1", "--calibration-batches", "2", "--calibration-batch-size", "-3", "-o",
                                  out.string(), "--db", db}, tmp.path);
    EXPECT_EQ(negative.exitCode, 2);
    EXPECT_NE(negative.err.find("--calibration-batch-size must be at least 1, got -3"), std::string::npos) << negative.err;

    const auto tooMany = runCli({"quantize", "w1", "--calibration-batches", "2000", "-o", out.string(), "--db", db}, tmp.path);
    EXPECT_EQ(tooMany.exitCode, 2);
    EXPECT_NE(tooMany.err.find("calibration asks for 128000 examples; the training set holds 60000"), std::string::npos) << tooMany.err;

    const fs::path file = tmp.path / "a-file";
    { std::ofstream(file) << "not a folder"; }
    const auto nowhere = runCli({"quantize", "w1", "--calibration-batches", "1", "-o", (file / "q.onnx").string(), "--db", db},
                                tmp.path);
    EXPECT_EQ(nowhere.exitCode, 5);
    EXPECT_NE(nowhere.err.find("cannot write the model there: the folder " + file.string() + " does not exist"), std::string::npos)
        << nowhere.err;
    EXPECT_FALSE(fs::exists(out));
}

TEST(CliQuantize, ARunWhoseTrainingDataStreamsIsRefusedNamingWhy) {
    TempDir tmp;
    const auto convert = runCli({"convert", (tmp.path / "tfr").string(), "--limit", "512", "--shards", "2"}, tmp.path);
    ASSERT_EQ(convert.exitCode, 0) << convert.err;
    const std::string db = trainW1(tmp, {"--set", "data.dataset=tfrecord", "--set",
                                         "data.train_files=" + (tmp.path / "tfr" / "train-*").string(), "--set",
                                         "data.test_files=" + (tmp.path / "tfr" / "test-*").string(), "--set",
                                         "train.max_steps=2", "--set", "train.batch_size=64"});
    const auto q = runCli({"quantize", "w1", "--calibration-batches", "1", "-o", (tmp.path / "q.onnx").string(), "--db", db},
                          tmp.path);
    EXPECT_EQ(q.exitCode, 2) << q.out;
    EXPECT_NE(q.err.find("calibration reads the training set in memory (IDX); this run's data streams"), std::string::npos) << q.err;
    EXPECT_FALSE(fs::exists(tmp.path / "q.onnx"));
}

}  // namespace
