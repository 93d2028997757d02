// Batch prediction (trainbench-cli predict): a stored run's model predicts a split through the
// training input pipeline; the predictions file holds what the compiled model answers, the store
// holds a prediction run (steps of input, forward and output, the accuracy, the cost), an
// input-bound prediction is called input-bound, and bad input fails naming what and where with
// nothing left under the output's name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/inference/modelsource.h"
#include "app/predict/predictionwriter.h"
#include "app/predict/predictrun.h"
#include "engine/data/imagedataset.h"
#include "engine/data/records/example.h"
#include "engine/data/records/example.pb.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/storage/storage.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnxexport.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "tests/app/errorof.h"
#include "tests/app/trainedrun.h"

namespace trainbench::app {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> splitCsv(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
    return out;
}

std::string fileText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class PredictRunTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("trainbench-predict-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
        source_ = testing::trainBriefly(dir_, db_, "mlp");
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    PredictRequest request(const std::string& out) const {
        PredictRequest r;
        r.model = std::to_string(source_.value);
        r.db = db_;
        r.out = (dir_ / out).string();
        r.batch_size = 128;
        r.threads = 1;
        return r;
    }
    // The compiled model's logits for the first n test examples, computed apart from the run.
    static std::vector<float> referenceLogits(int64_t n) {
        const ModelSource m = openModel(std::to_string(source_.value), db_);
        const engine::EvalSet& test = m.run->data.test;
        std::vector<float> raw(test.x.begin(), test.x.begin() + n * test.exampleSize());
        for (float& v : raw) v /= m.graph.metadata.input_scale;
        engine::CpuDevice device(1);
        engine::inference::CompiledGraph compiled(engine::graph::optimizeForInference(m.graph), device);
        std::vector<float> logits(static_cast<size_t>(n * compiled.classes()));
        compiled.run(raw.data(), n, logits.data());
        return logits;
    }
    // `count` Fashion-MNIST test images as TFRecord shards of 250.
    static std::string writeShards(const std::string& folder, int64_t count) {
        fs::create_directories(dir_ / folder);
        engine::DataConfig cfg;
        const engine::ImageDataset test = engine::loadIdxDataset(cfg, /*train=*/false);
        const int64_t size = test.channels * test.height * test.width;
        for (int64_t first = 0, shard = 0; first < count; first += 250, ++shard) {
            engine::TFRecordWriter w((dir_ / folder / ("part-" + std::to_string(shard) + ".tfrecord")).string());
            for (int64_t i = first; i < std::min(count, first + 250); ++i)
                w.write(engine::encodeExample(test.pixels.data() + i * size, static_cast<size_t>(size), test.labels[i],
                                              {test.channels, test.height, test.width}));
            w.close();
        }
        return (dir_ / folder / "part-*.tfrecord").string();
    }

    static fs::path dir_;
    static std::string db_;
    static profiler::RunId source_;
};

fs::path PredictRunTest::dir_;
std::string PredictRunTest::db_;
profiler::RunId PredictRunTest::source_;

TEST_F(PredictRunTest, TheCsvHoldsTheModelsAnswersAndTheStoreAPredictionRun) {
    const PredictOutcome o = runPrediction(request("p.csv"));
    ASSERT_EQ(o.status, profiler::RunStatus::Completed) << o.message;
    EXPECT_EQ(o.examples, 10000);

    std::ifstream in(dir_ / "p.csv");
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "index,prediction,score,label,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9");
    const std::vector<float> logits = referenceLogits(300);
    int64_t rows = 0, correct = 0;
    for (; std::getline(in, line); ++rows) {
        const std::vector<std::string> f = splitCsv(line);
        ASSERT_EQ(f.size(), 14u) << line;
        EXPECT_EQ(std::stoll(f[0]), rows);
        correct += f[1] == f[3];
        if (rows >= 300) continue;
        // Softmax of the reference logits, computed here in double.
        const float* z = logits.data() + rows * 10;
        const float top = *std::max_element(z, z + 10);
        double sum = 0.0;
        for (int c = 0; c < 10; ++c) sum += std::exp(double(z[c]) - top);
        EXPECT_EQ(std::stoll(f[1]), std::max_element(z, z + 10) - z) << "row " << rows;
        for (int c = 0; c < 10; ++c)
            EXPECT_NEAR(std::stod(f[static_cast<size_t>(4 + c)]), std::exp(double(z[c]) - top) / sum, 1e-6) << "row " << rows;
    }
    EXPECT_EQ(rows, 10000);
    EXPECT_DOUBLE_EQ(o.accuracy, static_cast<double>(correct) / 10000.0);

    profiler::RunStore store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    // The same checkpoint on the same test set: what the training run's last evaluation measured.
    EXPECT_NEAR(o.accuracy, store.evals(source_).back().accuracy, 2e-4);
    const auto run = store.run(o.id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->name, "predict-src-mlp");
    EXPECT_EQ(run->status, profiler::RunStatus::Completed);
    EXPECT_EQ(run->global_batch, 128);
    EXPECT_NEAR(run->throughput.value_or(0), o.examples_per_second, 1e-6 * o.examples_per_second);
    EXPECT_TRUE(run->cost.has_value()) << "cpu-host has a catalog price";
    const auto steps = store.steps(o.id);
    ASSERT_EQ(steps.size(), 79u);  // 10000 / 128, rounded up
    int64_t examples = 0;
    for (const auto& s : steps) {
        examples += s.samples;
        EXPECT_NEAR(s.input_seconds + s.forward_seconds + s.output_seconds, s.step_seconds, 1e-9);
        EXPECT_GT(s.forward_seconds, 0.0);
        EXPECT_GT(s.output_seconds, 0.0);
        EXPECT_EQ(s.backward_seconds, 0.0);
    }
    EXPECT_EQ(examples, 10000);
    const auto evals = store.evals(o.id);
    ASSERT_EQ(evals.size(), 1u);
    EXPECT_EQ(evals[0].split, "test");
    EXPECT_DOUBLE_EQ(evals[0].accuracy, o.accuracy);
    std::map<std::string, std::string> attrs;
    for (const auto& [k, v] : store.attributes(o.id)) attrs[k] = v;
    EXPECT_EQ(attrs[profiler::runattr::kPredictSourceRun], std::to_string(source_.value));
    EXPECT_EQ(attrs[profiler::runattr::kPredictSplit], "test");
    EXPECT_EQ(attrs[profiler::runattr::kPredictOutputBytes], std::to_string(fs::file_size(dir_ / "p.csv")));
}

TEST_F(PredictRunTest, TheTFRecordHoldsOneExamplePerPredictionAsTensorFlowReadsIt) {
    const PredictOutcome o = runPrediction(request("p.tfrecord"));
    ASSERT_EQ(o.status, profiler::RunStatus::Completed) << o.message;
    const std::vector<float> logits = referenceLogits(10);
    engine::Storage storage(engine::StorageConfig{});
    engine::TFRecordReader reader(storage.open((dir_ / "p.tfrecord").string()));
    std::string record;
    int64_t n = 0;
    for (; reader.next(record); ++n) {
        trainbench::proto::Example e;
        ASSERT_TRUE(e.ParseFromString(record)) << "record " << n;
        const auto& f = e.features().feature();
        EXPECT_EQ(f.at("index").int64_list().value(0), n);
        ASSERT_EQ(f.at("scores").float_list().value_size(), 10);
        EXPECT_TRUE(f.contains("label"));
        if (n < 10) {
            const float* z = logits.data() + n * 10;
            EXPECT_EQ(f.at("prediction").int64_list().value(0), std::max_element(z, z + 10) - z);
        }
    }
    EXPECT_EQ(n, 10000);
}

TEST_F(PredictRunTest, PredictionReadingFromSlowStorageIsCalledInputBound) {
    PredictRequest r = request("slow.csv");
    // 2,000 images (1.6 MB of records) read at 2 MB/s: most of the run waits for its input.
    r.overrides = {"data.dataset=tfrecord", "data.train_files=" + writeShards("slow", 2000),
                   "data.test_files=" + (dir_ / "slow" / "part-*.tfrecord").string(),
                   "data.storage.bandwidth_mb_s=2"};
    const PredictOutcome o = runPrediction(r);
    ASSERT_EQ(o.status, profiler::RunStatus::Completed) << o.message;
    EXPECT_EQ(o.examples, 2000);
    EXPECT_EQ(o.verdict.rfind("input-bound", 0), 0u) << o.verdict;
}

TEST_F(PredictRunTest, ACorruptRecordFailsTheRunNamingFileAndOffsetAndLeavesNoFile) {
    const std::string pattern = writeShards("corrupt", 500);
    const fs::path second = dir_ / "corrupt" / "part-1.tfrecord";
    {
        std::fstream f(second, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x55');  // inside the first record's data: its CRC no longer matches
    }
    PredictRequest r = request("corrupt.csv");
    r.overrides = {"data.dataset=tfrecord", "data.train_files=" + pattern, "data.test_files=" + pattern};
    const PredictOutcome o = runPrediction(r);
    EXPECT_EQ(o.status, profiler::RunStatus::Failed);
    EXPECT_NE(o.message.find(second.string()), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("byte offset 0"), std::string::npos) << o.message;
    EXPECT_FALSE(fs::exists(dir_ / "corrupt.csv"));
    profiler::RunStore store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.run(o.id)->status, profiler::RunStatus::Failed);
    EXPECT_EQ(store.steps(o.id).size(), 1u) << "the batch before the bad record is recorded";
}

TEST_F(PredictRunTest, BadRequestsAreRefusedBeforeARunExists) {
    EXPECT_NE(testing::messageOf([&] { runPrediction(request("p.json")); }).find("FILE.csv or FILE.tfrecord"), std::string::npos);
    PredictRequest r = request("p.csv");
    r.overrides = {"train.epochs=3"};
    EXPECT_NE(testing::messageOf([&] { runPrediction(r); }).find("--set train.epochs=3: a prediction takes data.* keys only"),
              std::string::npos);
    r.overrides = {"data.dataset=tfrecord", "data.train_files=/nonexistent/*.tfrecord",
                   "data.test_files=/nonexistent/*.tfrecord"};
    EXPECT_NE(testing::messageOf([&] { runPrediction(r); }).find("/nonexistent/*.tfrecord"), std::string::npos);
    r = request("p.csv");
    r.model = "no-such-run";
    EXPECT_NE(testing::messageOf([&] { runPrediction(r); }).find("MODEL 'no-such-run'"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "p.json"));
}

// The run's model exported to ONNX predicts, from the data the flags name, the same file the run's
// checkpoint predicts; the prediction run records the file as its model.
TEST_F(PredictRunTest, AnOnnxModelPredictsWhatItsRunPredicts) {
    const std::string file = (dir_ / "w1.onnx").string();
    engine::onnx::writeOnnx(openModel(std::to_string(source_.value), db_).graph, file);
    const PredictOutcome fromRun = runPrediction(request("from-run.csv"));
    ASSERT_EQ(fromRun.status, profiler::RunStatus::Completed) << fromRun.message;
    PredictRequest r = request("from-onnx.csv");
    r.model = file;
    r.overrides = {"data.dataset=fashion-mnist"};
    const PredictOutcome fromFile = runPrediction(r);
    ASSERT_EQ(fromFile.status, profiler::RunStatus::Completed) << fromFile.message;
    const std::string a = fileText(dir_ / "from-run.csv"), b = fileText(dir_ / "from-onnx.csv");
    EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 10001);
    EXPECT_TRUE(a == b) << "the predictions differ";
    EXPECT_EQ(fromFile.accuracy, fromRun.accuracy);

    profiler::RunStore store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto run = store.run(fromFile.id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->name, "predict-w1");
    EXPECT_EQ(run->model, "onnx(w1.onnx)");
    const nlohmann::json config = nlohmann::json::parse(run->config_json);
    EXPECT_EQ(config["model"], (nlohmann::json{{"onnx", file}}));
    EXPECT_EQ(config["data"]["dataset"], "fashion-mnist");
    EXPECT_EQ(config["train"]["batch_size"], 128);
    std::map<std::string, std::string> attrs;
    for (const auto& [k, v] : store.attributes(fromFile.id)) attrs[k] = v;
    EXPECT_EQ(attrs[profiler::runattr::kPredictSourceRun], file);
    EXPECT_NE(attrs[profiler::runattr::kPredictModel].find("ONNX file " + file), std::string::npos);
}

TEST_F(PredictRunTest, AnOnnxModelWithoutDataFlagsIsRefusedSayingWhatToGive) {
    const std::string file = (dir_ / "nodata.onnx").string();
    engine::onnx::writeOnnx(openModel(std::to_string(source_.value), db_).graph, file);
    PredictRequest r = request("nodata.csv");
    r.model = file;
    const std::string e = testing::messageOf([&] { runPrediction(r); });
    EXPECT_NE(e.find("MODEL " + file + " is an ONNX file: it holds no data to predict"), std::string::npos) << e;
    EXPECT_NE(e.find("--set data.dataset="), std::string::npos) << e;
    r.overrides = {"data.storage.preset=hdd"};  // a data key, but not which data
    EXPECT_NE(testing::messageOf([&] { runPrediction(r); }).find("holds no data"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "nodata.csv"));
}

// Rows of a predictions CSV: (prediction, label) per example.
std::vector<std::pair<std::string, std::string>> csvRows(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    std::vector<std::pair<std::string, std::string>> rows;
    while (std::getline(in, line)) {
        const auto f = splitCsv(line);
        rows.emplace_back(f.at(1), f.at(3));
    }
    return rows;
}

TEST_F(PredictRunTest, ReplicaProcessesEachPredictAShardIntoOneRun) {
    PredictRequest r = request("rep.csv");
    r.replicas = 2;
    r.threads = 2;
    r.program = TRAINBENCH_CLI_PATH;
    const PredictOutcome o = runPrediction(r);
    ASSERT_EQ(o.status, profiler::RunStatus::Completed) << o.message;
    EXPECT_EQ(o.examples, 10000);
    // Shard i holds examples i, i + 2, ...: together the single process's predictions, in another order.
    const PredictOutcome single = runPrediction(request("one.csv"));
    const auto all = csvRows(dir_ / "one.csv");
    const auto a = csvRows(dir_ / "rep-00000-of-00002.csv"), b = csvRows(dir_ / "rep-00001-of-00002.csv");
    ASSERT_EQ(a.size(), 5000u);
    ASSERT_EQ(b.size(), 5000u);
    for (size_t i = 0; i < 5000; ++i) {
        EXPECT_EQ(a[i], all[2 * i]) << "example " << 2 * i;
        EXPECT_EQ(b[i], all[2 * i + 1]) << "example " << 2 * i + 1;
    }
    EXPECT_DOUBLE_EQ(o.accuracy, single.accuracy);
    profiler::RunStore store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    int64_t examples = 0;
    for (const auto& s : store.steps(o.id)) examples += s.samples;
    EXPECT_EQ(examples, 10000);
    EXPECT_EQ(store.run(o.id)->devices, "cpu:2");
}

TEST_F(PredictRunTest, AReplicaThatFailsFailsTheRunNamingItAndItsError) {
    const std::string pattern = writeShards("onebad", 1000);
    const fs::path bad = dir_ / "onebad" / "part-3.tfrecord";
    {
        std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x55');
    }
    PredictRequest r = request("bad.csv");
    r.replicas = 2;
    r.program = TRAINBENCH_CLI_PATH;
    // Whole files per replica: part-1 and part-3 go to replica 1.
    r.overrides = {"data.dataset=tfrecord", "data.train_files=" + pattern, "data.test_files=" + pattern,
                   "data.pipeline.shard_by=file"};
    const PredictOutcome o = runPrediction(r);
    EXPECT_EQ(o.status, profiler::RunStatus::Failed);
    EXPECT_NE(o.message.find("replica 1 (pid "), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("exit 1"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find(bad.string() + ": corrupted record at byte offset 0"), std::string::npos) << o.message;
    EXPECT_FALSE(fs::exists(dir_ / "bad-00001-of-00002.csv"));
}

TEST(PredictionWriter, ClassNamesWithCommasAndQuotesAreQuotedFields) {
    const fs::path path = fs::temp_directory_path() / ("trainbench-names-" + std::to_string(::getpid()) + ".csv");
    {
        auto w = openPredictionWriter(path.string(), 2, {"T-shirt, top", "say \"boot\""});
        const float logits[2] = {0.0f, 1.0f};
        const int32_t label = 1;
        w->write(0, logits, 1, &label);
        w->close();
    }
    std::ifstream in(path);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    EXPECT_EQ(header, "index,prediction,prediction_name,score,label,\"p_T-shirt, top\",\"p_say \"\"boot\"\"\"");
    EXPECT_EQ(row.substr(0, row.find(",0.7")), "0,1,\"say \"\"boot\"\"\"");
    fs::remove(path);
}

}  // namespace
}  // namespace trainbench::app
