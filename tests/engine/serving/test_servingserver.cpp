// The inference server end to end over real loopback sockets with a real HTTP client: TF Serving's
// REST API answers with the dense layer's numbers, concurrent clients are batched, a full queue
// answers 503 at once, the metrics are Prometheus text, and a bearer token is enforced.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/engine/becomestrue.h"
#include "tests/engine/serving/servingfixture.h"

namespace trainbench::engine::serving {
namespace {

using namespace std::chrono_literals;
using trainbench::testing::becomesTrue;
using test::HttpClient;

TEST(ServingServer, AnswersTfServingsRestApiWithTheModelsNumbers) {
    ServingServer server(test::denseServable(), test::smallOptions());
    server.start();
    EXPECT_EQ(server.address(), "127.0.0.1:" + std::to_string(server.port())) << "loopback by default";
    HttpClient client(server.port());
    ASSERT_TRUE(client.connected());

    const auto status = nlohmann::json::parse(client.request("GET", "/v1/models/dense").body);
    EXPECT_EQ(status["model_version_status"][0]["version"], "1");
    EXPECT_EQ(status["model_version_status"][0]["state"], "AVAILABLE");
    EXPECT_EQ(status["model_version_status"][0]["status"]["error_code"], "OK");
    const auto meta = nlohmann::json::parse(client.request("GET", "/v1/models/dense/versions/1/metadata").body);
    EXPECT_EQ(meta["model_spec"]["name"], "dense");
    const auto& input = meta["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]["input"];
    EXPECT_EQ(input["tensor_shape"]["dim"][1]["size"], "4");

    const std::vector<float> x = {1, 2, 3, 4, -0.5f, 0.25f, 8, -3, 0, 0, 0, 1};
    const test::HttpReply reply = client.request("POST", "/v1/models/dense:predict", test::instancesJson(x, 4));
    test::expectPredictions(reply, x);
    const std::string timing = reply.headers.at("X-Trainbench-Timing");
    for (const char* key : {"decode_us=", "queue_us=", "batch_us=", "compute_us=", "encode_us=", "batch=3", "padded=3"})
        EXPECT_NE(timing.find(key), std::string::npos) << timing;

    // Columnar, on the same kept-alive connection, and under the version's path.
    const test::HttpReply columnar =
        client.request("POST", "/v1/models/dense/versions/1:predict", R"({"inputs": {"input": [[1,2,3,4]]}})");
    ASSERT_EQ(columnar.status, 200) << columnar.body;
    const auto outputs = nlohmann::json::parse(columnar.body)["outputs"];
    const std::vector<double> want = test::expectedDense({1, 2, 3, 4}, 4, 3);
    for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(outputs[0][j].get<double>(), want[j], 1e-6);

    const test::HttpReply metrics = client.request("GET", "/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_EQ(metrics.headers.at("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
    for (const char* line : {"trainbench_serving_requests_total{code=\"200\"} 4", "trainbench_serving_batch_size_bucket{le=\"4\"} 2",
                             "trainbench_serving_batch_size_count 2", "trainbench_serving_request_latency_seconds_count 2",
                             "trainbench_serving_queue_seconds_count 2", "trainbench_serving_compute_seconds_count 2",
                             "# TYPE trainbench_serving_connections_open gauge", "trainbench_serving_connections_open 1"})
        EXPECT_NE(metrics.body.find(line), std::string::npos) << line << "\n" << metrics.body;
}

TEST(ServingServer, ConcurrentClientsAreBatchedAndEachGetsItsOwnAnswer) {
    ServingOptions o = test::smallOptions();
    o.batching.max_batch_size = 16;
    // A per-call cost far above a request's own: while one batch runs, the others queue up.
    ServingServer server(test::denseServable({4}, 3, {3'000'000, 1000}), o);
    server.start();
    constexpr int kClients = 12, kRequests = 6;
    std::vector<std::thread> clients;
    std::atomic<int> good{0};
    for (int c = 0; c < kClients; ++c)
        clients.emplace_back([&, c] {
            HttpClient client(server.port());
            for (int r = 0; r < kRequests; ++r) {
                const std::vector<float> x = {float(c), float(r), 1, -1};
                const test::HttpReply reply = client.request("POST", "/v1/models/dense:predict", test::instancesJson(x, 4));
                test::expectPredictions(reply, x);
                good += reply.status == 200;
            }
        });
    for (auto& t : clients) t.join();
    EXPECT_EQ(good.load(), kClients * kRequests);
    const Histogram& sizes = server.metrics().batchSizes();
    EXPECT_EQ(sizes.sum(), kClients * kRequests);
    EXPECT_LT(sizes.count(), static_cast<uint64_t>(kClients * kRequests)) << "some requests shared a batch";
    EXPECT_GT(sizes.count() - sizes.bucketCount(0), 0u) << "batches of more than one example ran";
}

TEST(ServingServer, AFullQueueAnswers503AtOnceAndTheQueuedRequestsStillSucceed) {
    auto gate = std::make_shared<test::Gate>();
    ServingOptions o = test::smallOptions();
    o.batching.max_batch_size = 1;
    o.batching.max_enqueued_batches = 1;
    ServingServer server(test::denseServable({4}, 3, {}, gate), o);
    server.start();
    const std::vector<float> x = {1, 2, 3, 4};
    auto send = [&] { return HttpClient(server.port()).request("POST", "/v1/models/dense:predict", test::instancesJson(x, 4)); };
    std::thread running([&] { test::expectPredictions(send(), x); });
    ASSERT_TRUE(becomesTrue([&] { return gate->entered() == 1; }, 10s)) << "the first request is in the model";
    std::thread queued([&] { test::expectPredictions(send(), x); });
    ASSERT_TRUE(becomesTrue([&] { return server.enqueuedBatches() == 1; }, 10s)) << "the second waits in the queue";
    const auto start = std::chrono::steady_clock::now();
    const test::HttpReply refused = send();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "refused at once, not kept waiting";
    EXPECT_EQ(refused.status, 503);
    EXPECT_NE(refused.body.find("the batch queue is full (1 batches waiting, max_enqueued_batches)"), std::string::npos)
        << refused.body;
    EXPECT_EQ(refused.headers.at("Retry-After"), "1");
    gate->open();
    running.join();
    queued.join();
    EXPECT_EQ(server.metrics().errors("queue_full"), 1);
}

TEST(ServingServer, ABatchTimeoutLetsALaterRequestJoinAndPaddingRunsTheAllowedSize) {
    ServingOptions o = test::smallOptions();
    o.batching.batch_timeout_micros = 2'000'000;  // far longer than two clients take to send
    o.batching.allowed_batch_sizes = {4, 8};
    ServingServer server(test::denseServable(), o);
    server.start();
    const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8}, b = {-1, 0, 1, 2};
    test::HttpReply ra, rb;
    const auto start = std::chrono::steady_clock::now();
    std::thread first([&] { ra = HttpClient(server.port()).request("POST", "/v1/models/dense:predict", test::instancesJson(a, 4)); });
    std::thread second([&] { rb = HttpClient(server.port()).request("POST", "/v1/models/dense:predict", test::instancesJson(b, 4)); });
    first.join();
    second.join();
    test::expectPredictions(ra, a);
    test::expectPredictions(rb, b);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 2s) << "the underfull batch waited for its timeout";
    for (const test::HttpReply* r : {&ra, &rb}) {
        const std::string& timing = r->headers.at("X-Trainbench-Timing");
        EXPECT_NE(timing.find(",batch=3,padded=4"), std::string::npos) << "one batch of 2 + 1 examples, padded to 4: " << timing;
    }
}

TEST(ServingServer, AModelFailureIs500WithTheModelsMessage) {
    ServingServer server(test::denseServable({4}, 3, {}, nullptr, true), test::smallOptions());
    server.start();
    const test::HttpReply reply = HttpClient(server.port()).request("POST", "/v1/models/dense:predict", R"({"instances": [[1,2,3,4]]})");
    EXPECT_EQ(reply.status, 500);
    EXPECT_NE(reply.body.find("the model failed: out of device memory"), std::string::npos) << reply.body;
}

TEST(ServingServer, ABearerTokenIsRequiredWhenSet) {
    ServingOptions o = test::smallOptions();
    o.auth_token = "s3cret-token";
    ServingServer server(test::denseServable(), o);
    server.start();
    HttpClient client(server.port());
    const test::HttpReply refused = client.request("GET", "/v1/models/dense", {}, {{"Authorization", "Bearer wrong"}});
    EXPECT_EQ(refused.status, 401);
    EXPECT_EQ(refused.headers.at("WWW-Authenticate"), "Bearer");
    EXPECT_EQ(client.request("GET", "/v1/models/dense", {}, {{"Authorization", "Bearer s3cret-token"}}).status, 200);
}

TEST(ServingServer, CurlGetsThePredictions) {
    if (!std::filesystem::exists("/usr/bin/curl")) GTEST_SKIP() << "no /usr/bin/curl";
    ServingServer server(test::denseServable(), test::smallOptions());
    server.start();
    const std::string cmd = "/usr/bin/curl -s -m 20 -d '{\"instances\": [[1,2,3,4]]}' http://127.0.0.1:" +
                            std::to_string(server.port()) + "/v1/models/dense:predict";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0);
    test::HttpReply reply;
    reply.status = 200;
    reply.body = out;
    test::expectPredictions(reply, {1, 2, 3, 4});
}

TEST(ServingServer, BadOptionsAreNamed) {
    ServingOptions o = test::smallOptions();
    o.instances = 3;
    EXPECT_THROW(
        try { ServingServer(test::denseServable(), o); } catch (const std::invalid_argument& e) {
            EXPECT_STREQ(e.what(), "instances is 3, expected 1 to num_batch_threads (1): each instance runs on a batch thread");
            throw;
        },
        std::invalid_argument);
    o = test::smallOptions();
    o.batching.allowed_batch_sizes = {4};
    EXPECT_THROW(ServingServer(test::denseServable(), o), std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine::serving
