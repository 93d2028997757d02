// trainbench-cli serve and loadtest as a user runs them, on a briefly trained Fashion-MNIST run:
// the server answers TF Serving's REST calls with the model's own numbers (the same as `predict`
// writes), refuses bad requests naming the field, stops on SIGTERM; loadtest starts its own server,
// records a run of kind serve with its points, writes perf_analyzer's CSV; bad settings are refused
// before anything starts.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/data/idxreader.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "tests/engine/serving/httpclient.h"
#include "tests/integration/clirunner.h"

namespace {

using trainbench::testing::CliProcess;
using trainbench::testing::readAll;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;
using trainbench::engine::serving::test::HttpClient;
namespace profiler = trainbench::profiler;
namespace engine = trainbench::engine;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

const std::string kTestImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";

// Rows of predict's CSV: the probabilities of each class, per example.
std::vector<std::vector<double>> csvProbabilities(const fs::path& csv, int classes) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);  // header
    std::vector<std::vector<double>> rows;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream s(line);
        for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
        std::vector<double> p;
        for (size_t k = cells.size() - size_t(classes); k < cells.size(); ++k) p.push_back(std::stod(cells[k]));
        rows.push_back(p);
    }
    return rows;
}

class CliServe : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir;
        db_ = (tmp_->path / "runs.db").string();
        const auto train = runCli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--db", db_,
                                   "-q", "--set", "train.max_steps=40", "--set", "train.checkpoint_at_end=true",
                                   "--set", "train.eval_every_steps=0", "--set", "name=source"},
                                  tmp_->path);
        ASSERT_EQ(train.exitCode, 0) << train.err;
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    // The run_attributes of the run named `name`, by key.
    static std::map<std::string, std::string> attributesOf(profiler::RunStore& store, const std::string& name) {
        std::map<std::string, std::string> attributes;
        const auto row = store.findRun(name);
        EXPECT_TRUE(row.has_value()) << name;
        if (row)
            for (auto& [k, v] : store.attributes(row->id)) attributes[k] = v;
        return attributes;
    }
    // The fp32 model's probabilities of the test set, from `predict` (written once per suite).
    static std::vector<std::vector<double>> fp32Probabilities() {
        const fs::path csv = tmp_->path / "p.csv";
        if (!fs::exists(csv)) {
            const auto predict = runCli({"predict", "source", "--db", db_, "-q", "-o", csv.string()}, tmp_->path);
            EXPECT_EQ(predict.exitCode, 0) << predict.err;
        }
        return csvProbabilities(csv, 10);
    }
    static inline TempDir* tmp_ = nullptr;
    static inline std::string db_;
};

// Waits for `serve --ready-file` to say where it listens; "" if the process ended first or 3 minutes passed.
std::string waitReady(CliProcess& p, const fs::path& ready) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (std::chrono::steady_clock::now() < end) {
        std::ifstream in(ready);
        std::string url;
        if (in && std::getline(in, url) && !url.empty()) return url;
        if (p.finished()) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return {};
}

uint16_t portOf(const std::string& url) {  // http://127.0.0.1:PORT/v1/models/NAME
    const size_t colon = url.find(':', 7);
    return static_cast<uint16_t>(std::stoi(url.substr(colon + 1)));
}

// The first `n` test images as JSON instances of shape 1 x 28 x 28, pixels as stored.
std::string instancesJson(int n) {
    const engine::IdxArray idx = engine::readIdx(kTestImages);
    nlohmann::json instances = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
        nlohmann::json rows = nlohmann::json::array();
        for (int r = 0; r < 28; ++r) {
            nlohmann::json row = nlohmann::json::array();
            for (int c = 0; c < 28; ++c) row.push_back(int(idx.data[size_t(i * 784 + r * 28 + c)]));
            rows.push_back(row);
        }
        instances.push_back(nlohmann::json::array({rows}));
    }
    return nlohmann::json{{"instances", instances}}.dump();
}

TEST_F(CliServe, ServesTheModelsOwnAnswersRefusesBadRequestsAndStopsOnSigterm) {
    const fs::path ready = tmp_->path / "ready-fp32";
    CliProcess serve({"serve", "source", "--db", db_, "--port", "0", "--ready-file", ready.string(), "--model-name",
                      "fashion", "--max-batch-size", "64"},
                     tmp_->path);
    const std::string url = waitReady(serve, ready);
    ASSERT_FALSE(url.empty()) << serve.currentErr();
    EXPECT_EQ(url.substr(0, 17), "http://127.0.0.1:") << "loopback by default";
    EXPECT_EQ(url.substr(url.size() - 18), "/v1/models/fashion");

    HttpClient client(portOf(url));
    ASSERT_TRUE(client.connected());
    const auto status = client.request("GET", "/v1/models/fashion");
    EXPECT_EQ(status.status, 200);
    EXPECT_NE(status.body.find("AVAILABLE"), std::string::npos) << status.body;

    const auto answer = client.request("POST", "/v1/models/fashion:predict", instancesJson(5));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const auto predictions = nlohmann::json::parse(answer.body)["predictions"];
    ASSERT_EQ(predictions.size(), 5u);
    EXPECT_TRUE(answer.headers.count("X-Trainbench-Timing") || answer.headers.count("x-trainbench-timing"));

    // The same model through `predict`: softmax of the served logits = its probabilities.
    const auto probabilities = fp32Probabilities();
    ASSERT_GE(probabilities.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        ASSERT_EQ(predictions[i].size(), 10u);
        double top = -1e30, sum = 0;
        for (const auto& v : predictions[i]) top = std::max(top, v.get<double>());
        for (const auto& v : predictions[i]) sum += std::exp(v.get<double>() - top);
        for (size_t k = 0; k < 10; ++k)
            EXPECT_NEAR(std::exp(predictions[i][k].get<double>() - top) / sum, probabilities[i][k], 1e-4)
                << "example " << i << " class " << k;
    }

    const auto flat = client.request("POST", "/v1/models/fashion:predict", R"({"instances": [[1, 2, 3]]})");
    EXPECT_EQ(flat.status, 400);
    EXPECT_NE(flat.body.find("instances[0]"), std::string::npos) << flat.body;
    const auto tooMany = client.request("POST", "/v1/models/fashion:predict", instancesJson(65));
    EXPECT_EQ(tooMany.status, 400);
    EXPECT_NE(tooMany.body.find("max_batch_size"), std::string::npos) << tooMany.body;
    const auto stillServing = client.request("POST", "/v1/models/fashion:predict", instancesJson(1));
    EXPECT_EQ(stillServing.status, 200) << "a bad request does not stop the server";

    serve.signal(SIGTERM);
    const auto ended = serve.waitFor(std::chrono::seconds(60));
    ASSERT_TRUE(ended.has_value()) << "serve did not stop within 60 s of SIGTERM";
    EXPECT_EQ(ended->exitCode, 0) << ended->err;
    EXPECT_NE(ended->out.find("stopped: 3 requests answered 200, 0 refused with 503, 2 bad requests (400)"), std::string::npos) << ended->out;
}

// A transformer as PyTorch exports it (tests/fixtures/onnx/encoder.py: two layers, token ids in)
// served from its ONNX file: ids as JSON numbers in, PyTorch's logits out; an id outside the
// vocabulary (or not an integer) is a 400 naming the instance and the position, and the server
// keeps serving.
TEST(CliServeOnnx, ServesAnImportedEncoderOnTokenIdsAndRefusesIdsOutsideTheVocabulary) {
    TempDir tmp;
    const std::string dir = std::string(TRAINBENCH_SOURCE_DIR) + "/tests/fixtures/onnx/";
    const std::vector<float> ids = trainbench::testing::readFloats(dir + "encoder.input.bin");
    const std::vector<float> want = trainbench::testing::readFloats(dir + "encoder.output.bin");
    ASSERT_EQ(ids.size(), 32u);
    ASSERT_EQ(want.size(), 12u);
    const fs::path ready = tmp.path / "ready";
    CliProcess serve({"serve", dir + "encoder.onnx", "--db", (tmp.path / "runs.db").string(), "--port", "0", "--ready-file",
                      ready.string(), "--model-name", "encoder"},
                     tmp.path);
    const std::string url = waitReady(serve, ready);
    ASSERT_FALSE(url.empty()) << serve.currentErr();
    HttpClient client(portOf(url));
    ASSERT_TRUE(client.connected());
    nlohmann::json instances = nlohmann::json::array();
    for (int e = 0; e < 4; ++e) {
        nlohmann::json row = nlohmann::json::array();
        for (int t = 0; t < 8; ++t) row.push_back(static_cast<int>(ids[size_t(e * 8 + t)]));
        instances.push_back(row);
    }
    const auto answer = client.request("POST", "/v1/models/encoder:predict", nlohmann::json{{"instances", instances}}.dump());
    ASSERT_EQ(answer.status, 200) << answer.body;
    const auto predictions = nlohmann::json::parse(answer.body)["predictions"];
    ASSERT_EQ(predictions.size(), 4u);
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::fabs(v));
    for (size_t e = 0; e < 4; ++e)
        for (size_t k = 0; k < 3; ++k)
            EXPECT_NEAR(predictions[e][k].get<double>(), want[e * 3 + k], 1e-5 * scale) << "example " << e << " class " << k;

    for (const double bad : {50.0, -51.0, 2.5, 1e30, -0.5}) {
        nlohmann::json wrong = instances;
        wrong[1][5] = bad;
        const auto refused = client.request("POST", "/v1/models/encoder:predict", nlohmann::json{{"instances", wrong}}.dump());
        EXPECT_EQ(refused.status, 400) << refused.body;
        EXPECT_NE(refused.body.find("instances[1][5]: "), std::string::npos) << refused.body;
        EXPECT_NE(refused.body.find(" is not a token id of this model (an integer from -50 to 49)"), std::string::npos) << refused.body;
    }
    const auto again = client.request("POST", "/v1/models/encoder:predict", nlohmann::json{{"instances", instances}}.dump());
    EXPECT_EQ(again.status, 200) << "a bad request does not stop the server";
    serve.signal(SIGTERM);
    const auto ended = serve.waitFor(std::chrono::seconds(60));
    ASSERT_TRUE(ended.has_value()) << "serve did not stop within 60 s of SIGTERM";
    EXPECT_EQ(ended->exitCode, 0) << ended->err;
}

TEST_F(CliServe, AnInt8ServerAgreesWithFp32OnTheTopClass) {
    const fs::path ready = tmp_->path / "ready-int8";
    CliProcess serve({"serve", "source", "--db", db_, "--port", "0", "--ready-file", ready.string(), "--precision",
                      "int8", "--calibration-batches", "2"},
                     tmp_->path);
    const std::string url = waitReady(serve, ready);
    ASSERT_FALSE(url.empty()) << serve.currentErr();
    HttpClient client(portOf(url));
    const auto answer = client.request("POST", "/v1/models/source:predict", instancesJson(50));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const auto predictions = nlohmann::json::parse(answer.body)["predictions"];
    const auto probabilities = fp32Probabilities();
    ASSERT_GE(probabilities.size(), 50u);
    int agree = 0;
    for (size_t i = 0; i < 50; ++i) {
        size_t int8Top = 0, fp32Top = 0;
        for (size_t k = 1; k < 10; ++k) {
            if (predictions[i][k].get<double>() > predictions[i][int8Top].get<double>()) int8Top = k;
            if (probabilities[i][k] > probabilities[i][fp32Top]) fp32Top = k;
        }
        agree += int8Top == fp32Top;
    }
    EXPECT_GE(agree, 48) << "int8 and fp32 disagree on " << 50 - agree << " of 50 test images";
    serve.signal(SIGTERM);
    const auto ended = serve.waitFor(std::chrono::seconds(60));
    ASSERT_TRUE(ended.has_value());
    EXPECT_NE(ended->out.find("int8, weights"), std::string::npos) << ended->out;
    EXPECT_NE(ended->out.find("calibrated on 2 batches x 64 training examples"), std::string::npos) << ended->out;
}

TEST_F(CliServe, LoadtestOfARunRecordsAServeRunWithItsPointsAndPerfAnalyzerCsv) {
    const fs::path csv = tmp_->path / "sweep.csv";
    // The server it starts wants a token: every query carries it (a 401 would be an error).
    std::ofstream(tmp_->path / "token") << "s3cret-token\n";
    const auto lt = runCli({"loadtest", "source", "--db", db_, "--scenario", "concurrency", "--concurrency", "1,4",
                            "--min-queries", "60", "--min-duration", "300ms", "--max-batch-size", "32",
                            "--batch-timeout-micros", "500", "--csv", csv.string(), "--name", "sweep",
                            "--auth-token-file", (tmp_->path / "token").string()},
                           tmp_->path);
    ASSERT_EQ(lt.exitCode, 0) << lt.err << lt.out;
    EXPECT_NE(lt.out.find("recorded as run"), std::string::npos) << lt.out;

    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("sweep");
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->kind, "serve");
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    const auto points = store.loadTestPoints(row->id);
    ASSERT_EQ(points.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(points[i].scenario, "concurrency");
        EXPECT_EQ(points[i].concurrency, i == 0 ? 1 : 4);
        EXPECT_EQ(points[i].errors, 0);
        EXPECT_GE(points[i].queries, 60);
        EXPECT_GT(points[i].achieved_qps, 0);
        ASSERT_TRUE(points[i].p50_ms && points[i].p99_ms);
        EXPECT_LE(*points[i].p50_ms, *points[i].p99_ms);
        ASSERT_TRUE(points[i].compute_ms.has_value()) << "the server's own timing is in the breakdown";
        EXPECT_GT(*points[i].compute_ms, 0);
        EXPECT_FALSE(points[i].seconds.empty());
    }
    std::map<std::string, std::string> attributes = attributesOf(store, row->name);
    namespace ra = profiler::runattr;
    EXPECT_EQ(attributes[ra::kServePrecision], "fp32");
    EXPECT_EQ(attributes[ra::kServeMaxBatchSize], "32");
    EXPECT_EQ(attributes[ra::kServeBatchTimeoutMicros], "500");
    EXPECT_EQ(attributes[ra::kLoadtestScenario], "concurrency");
    EXPECT_NE(attributes[ra::kLoadtestExamples].find("test set"), std::string::npos);
    // The model as served, measured on the run's full test set: in fp32 its weights are W1's
    // 535,818 parameters in float32, and its accuracy is what training's own evaluation measured.
    EXPECT_EQ(attributes[ra::kServeWeightBytes], std::to_string(535818 * 4));
    EXPECT_EQ(attributes[ra::kServeFp32WeightBytes], attributes[ra::kServeWeightBytes]);
    EXPECT_EQ(attributes[ra::kServeTestExamples], "10000");
    EXPECT_EQ(attributes[ra::kServeTestAccuracy], attributes[ra::kServeFp32TestAccuracy]);
    EXPECT_EQ(attributes.count(ra::kServeCalibration), 0u) << "fp32 has no calibration";
    const auto source = store.findRun("source");
    ASSERT_TRUE(source && source->final_accuracy);
    EXPECT_NEAR(std::stod(attributes[ra::kServeTestAccuracy]), *source->final_accuracy, 0.002)
        << "the compiled inference graph and training's evaluation agree on the test set";
    EXPECT_NE(lt.out.find("model: fp32, "), std::string::npos) << lt.out;
    const auto config = nlohmann::json::parse(row->config_json);
    EXPECT_EQ(config["scenario"], "concurrency");

    const std::string text = readAll(csv);
    EXPECT_EQ(text.substr(0, text.find('\n')),
              "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
              "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
}

// An int8 load test records the int8 model it served next to fp32: ≥ 3.5x smaller, top-1 within
// a point and a half of fp32's on the full test set (W1 after 40 steps), and its calibration.
TEST_F(CliServe, AnInt8LoadTestRecordsTheModelsSizeAndAccuracyNextToFp32) {
    const auto lt = runCli({"loadtest", "source", "--db", db_, "--precision", "int8", "--calibration-batches", "2",
                            "--scenario", "single-stream", "--min-queries", "20", "--min-duration", "0s", "--name",
                            "lt-int8"},
                           tmp_->path);
    ASSERT_EQ(lt.exitCode, 0) << lt.err << lt.out;
    EXPECT_NE(lt.out.find("x smaller than fp32's"), std::string::npos) << lt.out;
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("lt-int8");
    ASSERT_TRUE(row.has_value());
    std::map<std::string, std::string> attributes = attributesOf(store, row->name);
    namespace ra = profiler::runattr;
    EXPECT_EQ(attributes[ra::kServePrecision], "int8");
    const double int8Bytes = std::stod(attributes[ra::kServeWeightBytes]);
    const double fp32Bytes = std::stod(attributes[ra::kServeFp32WeightBytes]);
    EXPECT_EQ(fp32Bytes, 535818.0 * 4);
    EXPECT_GE(fp32Bytes / int8Bytes, 3.5);
    const double int8Accuracy = std::stod(attributes[ra::kServeTestAccuracy]);
    const double fp32Accuracy = std::stod(attributes[ra::kServeFp32TestAccuracy]);
    EXPECT_GT(fp32Accuracy, 0.6);
    EXPECT_NEAR(int8Accuracy, fp32Accuracy, 0.015);
    // 255 input levels where the CPU has VNNI, 127 where u8 x s8 products could saturate without it.
    const std::string calibration = attributes[ra::kServeCalibration];
    EXPECT_TRUE(calibration == "2 batches x 64 training examples, minmax, seed 0, u8 levels 255" ||
                calibration == "2 batches x 64 training examples, minmax, seed 0, u8 levels 127")
        << calibration;
}

// A 20 ms batch timeout with one query at a time: every query waits the whole window for company
// that never comes. The verdict says queue-bound, its first action shortens the timeout, and
// applying it runs the same load test against a server with the new timeout.
TEST_F(CliServe, AQueueBoundLoadTestsActionIsANewLoadTestWithTheShorterTimeout) {
    const auto lt = runCli({"loadtest", "source", "--db", db_, "--scenario", "single-stream", "--batch-timeout-micros",
                            "20000", "--min-queries", "30", "--min-duration", "0s", "--name", "slow"},
                           tmp_->path);
    ASSERT_EQ(lt.exitCode, 0) << lt.err << lt.out;
    EXPECT_NE(lt.out.find("verdict: queue-bound"), std::string::npos) << lt.out;

    const auto profile = runCli({"profile", "slow", "--db", db_}, tmp_->path);
    ASSERT_EQ(profile.exitCode, 0) << profile.err;
    // The severity is the queue's share of the latency, which depends on how fast the model runs here
    // (under the sanitizers the model's own time is 50-100 times longer): only the bound is asserted.
    EXPECT_NE(profile.out.find("verdict: queue-bound ("), std::string::npos) << profile.out;
    EXPECT_NE(profile.out.find("1. Shorter batch timeout"), std::string::npos) << profile.out;
    EXPECT_NE(profile.out.find("--batch-timeout-micros: 20000 -> 5000"), std::string::npos) << profile.out;

    // A hostile run name reaches the printed command as one quoted shell word, never as code.
    const auto hostile = runCli({"loadtest", "source", "--db", db_, "-q", "--scenario", "single-stream",
                                 "--batch-timeout-micros", "20000", "--min-queries", "10", "--min-duration", "0s",
                                 "--name", "x'; touch pwned #\n$(id)"},
                                tmp_->path);
    ASSERT_EQ(hostile.exitCode, 0) << hostile.err;
    const auto shown = runCli({"apply", "x'; touch pwned #\n$(id)", "--action", "1", "--db", db_}, tmp_->path);
    ASSERT_EQ(shown.exitCode, 0) << shown.err << shown.out;
    EXPECT_NE(shown.out.find("--name 'x'\\''; touch pwned #\n$(id)-action1'"), std::string::npos) << shown.out;

    const auto apply = runCli({"apply", "slow", "--action", "1", "--run", "-q", "--db", db_}, tmp_->path);
    ASSERT_EQ(apply.exitCode, 0) << apply.err << apply.out;
    EXPECT_NE(apply.out.find("as a load test: trainbench-cli loadtest '1' --scenario single-stream"), std::string::npos)
        << apply.out;
    EXPECT_NE(apply.out.find("'--batch-timeout-micros=5000'"), std::string::npos) << apply.out;
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto again = store.findRun("slow-action1");
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->kind, "serve");
    std::map<std::string, std::string> attributes = attributesOf(store, again->name);
    EXPECT_EQ(attributes[profiler::runattr::kServeBatchTimeoutMicros], "5000");
    const auto before = store.loadTestPoints(store.findRun("slow")->id);
    const auto after = store.loadTestPoints(again->id);
    ASSERT_EQ(before.size(), 1u);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_LT(*after[0].p50_ms, *before[0].p50_ms) << "a quarter of the window to wait";
}

// plan-serving's estimates leave this host out; --measure serves the run on it in TF Serving's CPU
// configurations and measures each with a real load test, recorded in the store.
TEST_F(CliServe, PlanServingMeasuresThisHostsConfigurationsWithRealLoadTests) {
    const size_t before = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly).listRuns().size();
    const auto plan = runCli({"plan-serving", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json", "--qps",
                              "50", "--p99", "200ms", "--precision", "fp32", "--measure", "source", "--db", db_,
                              "--probe", "500ms"},
                             tmp_->path);
    ASSERT_EQ(plan.exitCode, 0) << plan.err << plan.out;
    EXPECT_NE(plan.out.find("measured on this host (cpu-host"), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("batching, timeout 0"), std::string::npos) << plan.out;
    EXPECT_EQ(plan.out.find("cpu-host: not planned"), std::string::npos) << plan.out;
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), before + 4) << "one load test per configuration";
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(runs[i].kind, "serve");
        const auto points = store.loadTestPoints(runs[i].id);
        ASSERT_EQ(points.size(), 1u);
        EXPECT_EQ(points[0].scenario, "server");
        EXPECT_GT(points[0].achieved_qps, 0.0);
        // Keeping up is a speed property of this build: a release build on 2 cores answers 50 QPS of W1
        // without an error; one under the sanitizers runs the model 50-100 times slower and sheds load.
        if (!kSanitized) {
            EXPECT_EQ(points[0].errors, 0);
            EXPECT_NEAR(points[0].achieved_qps, 50, 5) << "a 2-core host answers 50 QPS of W1";
        }
    }
    // Each records the model it served, measured once for all four: W1's weights in float32 and
    // one accuracy on the run's 10,000 test examples.
    namespace ra = profiler::runattr;
    const std::string accuracy = attributesOf(store, runs[0].name)[ra::kServeTestAccuracy];
    EXPECT_FALSE(accuracy.empty());
    for (size_t i = 0; i < 4; ++i) {
        std::map<std::string, std::string> attributes = attributesOf(store, runs[i].name);
        EXPECT_EQ(attributes[ra::kServeWeightBytes], std::to_string(535818 * 4)) << runs[i].name;
        EXPECT_EQ(attributes[ra::kServeTestExamples], "10000") << runs[i].name;
        EXPECT_EQ(attributes[ra::kServeTestAccuracy], accuracy) << runs[i].name;
    }
}

TEST_F(CliServe, LoadtestOfAUrlWithNothingThereFailsNamingTheAddress) {
    // Port 1: nothing listens there (a privileged port no test binds).
    const auto lt = runCli({"loadtest", "http://127.0.0.1:1/v1/models/x", "--db", db_, "--examples", kTestImages,
                            "--min-queries", "5", "--min-duration", "0s", "--no-record"},
                           tmp_->path);
    EXPECT_NE(lt.exitCode, 0);
    EXPECT_NE(lt.err.find("127.0.0.1:1"), std::string::npos) << lt.err;
}

size_t runCount(const std::string& db) {
    return profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).listRuns().size();
}

TEST_F(CliServe, BadSettingsAreRefusedBeforeAnythingStartsNamingTheFlag) {
    const size_t runsBefore = runCount(db_);
    const auto sizes = runCli({"serve", "source", "--db", db_, "--allowed-batch-sizes", "8,4", "--max-batch-size", "4"},
                              tmp_->path);
    EXPECT_EQ(sizes.exitCode, 2);
    EXPECT_NE(sizes.err.find("--allowed-batch-sizes"), std::string::npos) << sizes.err;
    const auto name = runCli({"serve", "source", "--db", db_, "--model-name", "a/b"}, tmp_->path);
    EXPECT_EQ(name.exitCode, 2);
    EXPECT_NE(name.err.find("'/'"), std::string::npos) << name.err;
    const auto missing = runCli({"serve", "nosuchrun", "--db", db_}, tmp_->path);
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("nosuchrun"), std::string::npos) << missing.err;
    const auto shape = runCli({"loadtest", "source", "--db", db_, "--example-shape", "3,3"}, tmp_->path);
    EXPECT_EQ(shape.exitCode, 2);
    EXPECT_NE(shape.err.find("3x3 holds 9 numbers"), std::string::npos) << shape.err;
    const auto noName = runCli({"loadtest", "http://127.0.0.1:8501", "--db", db_, "--examples", kTestImages}, tmp_->path);
    EXPECT_EQ(noName.exitCode, 2);
    EXPECT_NE(noName.err.find("--model-name"), std::string::npos) << noName.err;
    EXPECT_EQ(runCount(db_), runsBefore) << "a refused command records nothing";
}

}  // namespace
