// trainbench-cli export-model as a user runs it on a briefly trained W1 run (and a small network
// with batch norm, where folding changes the graph): the file passes onnx's own checker, imports
// back to bit-identical logits, its folded form stays within 1e-5, predict takes it as MODEL and
// writes the run's predictions, and every bad MODEL or output fails naming what and where.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/inference/modelsource.h"
#include "engine/data/dataconfig.h"
#include "engine/data/imagedataset.h"
#include "engine/device/cpudevice.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnximport.h"
#include "tests/integration/clirunner.h"

namespace {

using trainbench::testing::CliResult;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
namespace fs = std::filesystem;
namespace engine = trainbench::engine;
namespace app = trainbench::app;

constexpr int64_t kImages = 200;

// A small network with batch norm after its convolution: what --folded folds.
constexpr const char* kBatchNormExperiment = R"({
  "name": "bn-net", "seed": 3,
  "model": {"layers": [
    {"type": "conv2d", "filters": 8, "kernel": 3},
    {"type": "batch_norm", "momentum": 0.9},
    {"type": "relu"},
    {"type": "maxpool2d", "size": 2},
    {"type": "flatten"},
    {"type": "dense", "units": 10}
  ]},
  "train": {"batch_size": 64, "max_steps": 30, "eval_every_steps": 0, "threads": 1, "checkpoint_at_end": true}
})";

class CliExportModel : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir;
        db_ = (dir() / "runs.db").string();
        const CliResult w1 = cli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--db", db_,
                                  "-q", "--set", "train.max_steps=30", "--set", "train.checkpoint_at_end=true", "--set",
                                  "train.eval_every_steps=0", "--set", "train.threads=1", "--set", "name=w1", "--set",
                                  "train.checkpoint_path=" + (dir() / "w1.ckpt").string()});
        ASSERT_EQ(w1.exitCode, 0) << w1.err;
        std::ofstream(dir() / "bn-net.json") << kBatchNormExperiment;
        const CliResult bn = cli({"run", (dir() / "bn-net.json").string(), "--db", db_, "-q", "--set",
                                  "train.checkpoint_path=" + (dir() / "bn.ckpt").string()});
        ASSERT_EQ(bn.exitCode, 0) << bn.err;
        fs::create_directories(dir() / "onnx");
        for (const std::string run : {"w1", "bn-net"}) {
            for (const bool folded : {false, true}) {
                const std::string file = exported(run, folded);
                std::vector<std::string> args = {"export-model", run, "-o", file, "--db", db_};
                if (folded) args.push_back("--folded");
                const CliResult r = cli(args);
                ASSERT_EQ(r.exitCode, 0) << r.err;
                exportOutput(run, folded) = r.out;
            }
        }
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }

    static const fs::path& dir() { return tmp_->path; }
    static CliResult cli(const std::vector<std::string>& args) { return runCli(args, dir()); }
    static std::string exported(const std::string& run, bool folded) {
        return (dir() / "onnx" / (run + (folded ? "-folded" : "") + ".onnx")).string();
    }
    static std::string& exportOutput(const std::string& run, bool folded) {
        static std::string outputs[4];
        return outputs[(run == "w1" ? 0 : 2) + (folded ? 1 : 0)];
    }
    // The first kImages Fashion-MNIST test images as stored (0..255), the graphs' input.
    static std::vector<float> testImages() {
        const engine::ImageDataset test = engine::loadIdxDataset(engine::DataConfig{}, /*train=*/false);
        const size_t n = static_cast<size_t>(kImages * test.exampleSize());
        return std::vector<float>(test.pixels.begin(), test.pixels.begin() + static_cast<std::ptrdiff_t>(n));
    }
    static std::vector<float> logits(const engine::graph::Graph& g, const std::vector<float>& x) {
        engine::CpuDevice device(1);
        engine::inference::CompiledGraph compiled(g, device);
        std::vector<float> out(static_cast<size_t>(kImages * g.classes));
        compiled.run(x.data(), kImages, out.data());
        return out;
    }

    static inline TempDir* tmp_ = nullptr;
    static inline std::string db_;
};

// The command's exit status and its output (stdout and stderr).
std::pair<int, std::string> shell(const std::string& command) {
    std::string out;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return {-1, "popen failed"};
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    return {::pclose(p), out};
}

void writeFloats(const fs::path& path, const std::vector<float>& v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

TEST_F(CliExportModel, SaysWhatItWrote) {
    const std::string& out = exportOutput("w1", false);
    const std::string file = exported("w1", false);
    EXPECT_NE(out.find("wrote " + file + ": "), std::string::npos) << out;
    // 784x512 + 512 + 512x256 + 256 + 256x10 + 10
    EXPECT_NE(out.find("ONNX opset 13 (IR version 8), 535,818 parameters"), std::string::npos) << out;
    std::string bytes = std::to_string(fs::file_size(file));
    for (int at = static_cast<int>(bytes.size()) - 3; at > 0; at -= 3) bytes.insert(static_cast<size_t>(at), ",");
    EXPECT_NE(out.find(": " + bytes + " bytes"), std::string::npos) << out;
    EXPECT_NE(out.find("run 1 (w1) of " + db_), std::string::npos) << out;
    EXPECT_NE(out.find("as trained"), std::string::npos) << out;
    EXPECT_NE(out.find("stored values x 0.003921569 + 0"), std::string::npos) << out;
    EXPECT_NE(out.find("class names: none"), std::string::npos) << out;
    EXPECT_NE(exportOutput("bn-net", true).find("folded (batch norm folded"), std::string::npos)
        << exportOutput("bn-net", true);
}

TEST_F(CliExportModel, ExportsPassOnnxCheckerShapeInferenceAndANumpyEvaluation) {
    std::string python;
    for (const char* p : {"/usr/bin/python3", "python3"})
        if (shell(std::string(p) + " -c 'import onnx, numpy'").first == 0) {
            python = p;
            break;
        }
    if (python.empty())
        GTEST_SKIP() << "python3 with the onnx package (Debian: python3-onnx) is not installed; "
                        "tests/data/onnx/check_export.py cannot run";
    // The script compares its own evaluation with trainbench's logits of the run's graph, written
    // next to each file.
    std::vector<float> x = testImages();
    x.resize(static_cast<size_t>(8 * 784));
    for (const std::string run : {"w1", "bn-net"}) {
        const app::ModelSource m = app::openModel(run, db_);
        engine::CpuDevice device(1);
        engine::inference::CompiledGraph compiled(m.graph, device);
        std::vector<float> z(static_cast<size_t>(8 * m.graph.classes));
        compiled.run(x.data(), 8, z.data());
        for (const bool folded : {false, true}) {
            const fs::path stem = fs::path(exported(run, folded)).replace_extension();
            writeFloats(stem.string() + ".input.bin", x);
            writeFloats(stem.string() + ".logits.bin", z);
        }
    }
    const auto [status, output] =
        shell(python + " " TRAINBENCH_SOURCE_DIR "/tests/data/onnx/check_export.py " + (dir() / "onnx").string());
    EXPECT_EQ(status, 0) << output;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 4) << output;
    EXPECT_EQ(output.find("FAILED"), std::string::npos) << output;
}

TEST_F(CliExportModel, ReimportedGivesBitIdenticalLogitsAndFoldedStaysWithin1e5) {
    const std::vector<float> x = testImages();
    for (const std::string run : {"w1", "bn-net"}) {
        const app::ModelSource m = app::openModel(run, db_);
        const std::vector<float> want = logits(m.graph, x);
        const std::vector<float> back = logits(engine::onnx::readOnnx(exported(run, false)), x);
        ASSERT_EQ(back.size(), want.size());
        EXPECT_EQ(std::memcmp(back.data(), want.data(), want.size() * sizeof(float)), 0) << run << ": not bit-identical";
        const engine::graph::Graph folded = engine::onnx::readOnnx(exported(run, true));
        if (run == "bn-net") {
            const auto bn = std::count_if(folded.nodes.begin(), folded.nodes.end(), [](const engine::graph::Node& n) {
                return n.kind == engine::graph::OpKind::BatchNormalization;
            });
            EXPECT_EQ(bn, 0) << "batch norm is folded";
            EXPECT_LT(folded.nodes.size(), m.graph.nodes.size());
        }
        const std::vector<float> f = logits(folded, x);
        float largest = 0.0f, diff = 0.0f;
        for (size_t i = 0; i < want.size(); ++i) {
            largest = std::max(largest, std::abs(want[i]));
            diff = std::max(diff, std::abs(f[i] - want[i]));
        }
        EXPECT_GT(largest, 0.0f);
        EXPECT_LE(diff, 1e-5f * largest) << run << ": folded logits differ by " << diff << " (largest " << largest << ")";
    }
}

TEST_F(CliExportModel, PredictWithTheOnnxFileWritesTheRunsPredictions) {
    const std::string fromRun = (dir() / "from-run.csv").string(), fromFile = (dir() / "from-onnx.csv").string();
    const CliResult a = cli({"predict", "w1", "-o", fromRun, "--threads", "1", "--db", db_});
    ASSERT_EQ(a.exitCode, 0) << a.err;
    const CliResult b = cli({"predict", exported("w1", false), "-o", fromFile, "--threads", "1", "--db", db_, "--set",
                             "data.dataset=fashion-mnist"});
    ASSERT_EQ(b.exitCode, 0) << b.err;
    EXPECT_NE(b.out.find("ONNX file " + exported("w1", false)), std::string::npos) << b.out;
    const std::string want = trainbench::testing::readAll(fromRun);
    EXPECT_EQ(std::count(want.begin(), want.end(), '\n'), 10001);
    EXPECT_TRUE(want == trainbench::testing::readAll(fromFile)) << "the predictions differ";
    // The folded file, too: the inference graph predict runs is the folded one either way.
    const std::string fromFolded = (dir() / "from-folded.csv").string();
    const CliResult c = cli({"predict", exported("w1", true), "-o", fromFolded, "--threads", "1", "--db", db_, "--set",
                             "data.dataset=fashion-mnist"});
    ASSERT_EQ(c.exitCode, 0) << c.err;
    EXPECT_TRUE(want == trainbench::testing::readAll(fromFolded)) << "the folded file's predictions differ";
    // Without the data flags: refused, saying what to give, nothing written.
    const CliResult d = cli({"predict", exported("w1", false), "-o", (dir() / "nodata.csv").string(), "--db", db_});
    EXPECT_EQ(d.exitCode, 2);
    EXPECT_NE(d.err.find("is an ONNX file: it holds no data to predict; say which with --set data.dataset="),
              std::string::npos) << d.err;
    EXPECT_FALSE(fs::exists(dir() / "nodata.csv"));
}

TEST_F(CliExportModel, AnOnnxPredictionsActionBecomesAPredictionWithTheSameFileAndData) {
    const CliResult convert = cli({"convert", (dir() / "tfr").string(), "--split", "test", "--shards", "8"});
    ASSERT_EQ(convert.exitCode, 0) << convert.err;
    const std::string shards = (dir() / "tfr" / "test-*").string(), model = exported("w1", false);
    // 2 MB/s per open file: one file at a time spends most of the prediction reading.
    const CliResult slow = cli({"predict", model, "-o", (dir() / "slow.csv").string(), "--db", db_, "--name", "slow-onnx",
                                "--set", "data.dataset=tfrecord", "--set", "data.test_files=" + shards, "--set",
                                "data.train_files=" + shards, "--set", "data.storage.stream_bandwidth_mb_s=2"});
    ASSERT_EQ(slow.exitCode, 0) << slow.err << slow.out;
    ASSERT_NE(slow.out.find("verdict: input-bound"), std::string::npos) << slow.out;
    const CliResult apply = cli({"apply", "slow-onnx", "--action", "1", "--run", "-q", "--db", db_});
    ASSERT_EQ(apply.exitCode, 0) << apply.err << apply.out;
    EXPECT_NE(apply.out.find("as a prediction: trainbench-cli predict '" + model + "' -o"), std::string::npos) << apply.out;
    EXPECT_NE(apply.out.find("--set 'data.dataset=tfrecord'"), std::string::npos) << apply.out;
    EXPECT_TRUE(fs::exists(dir() / "slow-action1.csv"));
}

TEST_F(CliExportModel, AMissingRunAndARunWithoutCheckpointAreNamed) {
    const CliResult missing = cli({"export-model", "no-such-run", "-o", (dir() / "x.onnx").string(), "--db", db_});
    EXPECT_EQ(missing.exitCode, 4);
    EXPECT_NE(missing.err.find("MODEL 'no-such-run': there is no run 'no-such-run' in " + db_), std::string::npos)
        << missing.err;
    const CliResult run = cli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-logreg.json", "--db", db_,
                               "-q", "--set", "train.max_steps=3", "--set", "train.eval_every_steps=0", "--set",
                               "train.eval_at_epoch_end=false", "--set", "name=no-ckpt"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    const CliResult noCkpt = cli({"export-model", "no-ckpt", "-o", (dir() / "x.onnx").string(), "--db", db_});
    EXPECT_EQ(noCkpt.exitCode, 2);
    EXPECT_NE(noCkpt.err.find("MODEL 'no-ckpt': run "), std::string::npos) << noCkpt.err;
    EXPECT_NE(noCkpt.err.find("kept no checkpoint"), std::string::npos) << noCkpt.err;
    EXPECT_FALSE(fs::exists(dir() / "x.onnx"));
}

TEST_F(CliExportModel, AnOutputThatCannotBeWrittenIsNamed) {
    const std::string nowhere = (dir() / "no-such-folder" / "w1.onnx").string();
    const CliResult r = cli({"export-model", "w1", "-o", nowhere, "--db", db_});
    EXPECT_EQ(r.exitCode, 5);
    EXPECT_NE(r.err.find(nowhere), std::string::npos) << r.err;
    EXPECT_NE(r.err.find((dir() / "no-such-folder").string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir() / "no-such-folder"));
    const CliResult ext = cli({"export-model", "w1", "-o", (dir() / "w1.bin").string(), "--db", db_});
    EXPECT_EQ(ext.exitCode, 2);
    EXPECT_NE(ext.err.find("w1.bin: name the file FILE.onnx"), std::string::npos) << ext.err;
    EXPECT_FALSE(fs::exists(dir() / "w1.bin"));
}

TEST_F(CliExportModel, ACorruptOnnxFileGivenAsModelIsNamed) {
    const fs::path corrupt = dir() / "corrupt.onnx";
    {
        std::ifstream in(exported("w1", false), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bytes.resize(bytes.size() / 2);  // truncated mid-initializer
        std::ofstream(corrupt, std::ios::binary) << bytes;
    }
    const CliResult p = cli({"predict", corrupt.string(), "-o", (dir() / "c.csv").string(), "--db", db_, "--set",
                             "data.dataset=fashion-mnist"});
    EXPECT_EQ(p.exitCode, 2);
    EXPECT_NE(p.err.find(corrupt.string() + ": not an ONNX model"), std::string::npos) << p.err;
    EXPECT_FALSE(fs::exists(dir() / "c.csv"));
    const CliResult e = cli({"export-model", corrupt.string(), "-o", (dir() / "c.onnx").string(), "--db", db_});
    EXPECT_EQ(e.exitCode, 2);
    EXPECT_NE(e.err.find(corrupt.string() + ": not an ONNX model"), std::string::npos) << e.err;
    const CliResult gone = cli({"export-model", (dir() / "gone.onnx").string(), "-o", (dir() / "c.onnx").string()});
    EXPECT_EQ(gone.exitCode, 2);
    EXPECT_NE(gone.err.find((dir() / "gone.onnx").string()), std::string::npos) << gone.err;
    EXPECT_FALSE(fs::exists(dir() / "c.onnx"));
}

TEST_F(CliExportModel, AnOnnxFileReexportsFoldedToTheSameFileAsItsRun) {
    // MODEL as an ONNX file: no store is needed, and folding the imported graph gives the bytes
    // folding the run's graph gave.
    const std::string again = (dir() / "again-folded.onnx").string();
    const CliResult r = cli({"export-model", exported("bn-net", false), "-o", again, "--folded", "--db",
                             (dir() / "no-store.db").string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_FALSE(fs::exists(dir() / "no-store.db"));
    EXPECT_NE(r.out.find("ONNX file " + exported("bn-net", false) + " (exported from run 2 (bn-net) of " + db_ + ")"),
              std::string::npos) << r.out;
    const engine::graph::Graph a = engine::onnx::readOnnx(again), b = engine::onnx::readOnnx(exported("bn-net", true));
    ASSERT_EQ(a.initializers.size(), b.initializers.size());
    for (const auto& [name, init] : b.initializers) EXPECT_EQ(a.initializers.at(name).values, init.values) << name;
}

}  // namespace
