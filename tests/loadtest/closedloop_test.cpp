// SingleStream and the concurrency sweep on loopback, the per-query breakdown from the server's
// X-Trainbench-Timing header, the perf_analyzer CSV and the JSON result.
#include <gtest/gtest.h>

#include <boost/asio.hpp>

#include <sstream>
#include <thread>

#include "app/loadtest/loadtest.h"
#include "app/loadtest/perfcsv.h"
#include "app/loadtest/resultjson.h"
#include "loopbackoptions.h"
#include "testpredictserver.h"

namespace trainbench::app::loadtest {
namespace {

using namespace std::chrono_literals;

TEST(SingleStream, BreaksEachQueryDownWithTheServersTimingHeader) {
    trainbench::testing::TestPredictServer server({.serviceTime = 2ms, .timingHeader = true});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::SingleStream;
    o.minQueryCount = 50;
    o.minDuration = 200ms;
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    ASSERT_EQ(r.failed, 0) << r.firstError;
    EXPECT_GE(r.completed, 50);
    EXPECT_EQ(r.boundPercentile, 90.0);
    EXPECT_EQ(r.breakdown.withServerTiming, r.completed);
    EXPECT_DOUBLE_EQ(r.breakdown.serverCompute, 2000.0);  // what the header said
    EXPECT_GE(r.breakdown.network, 0.0);                   // the server really slept 2 ms of the wire time
    const LatencyBreakdown& b = r.breakdown;
    const double parts = b.clientSend + b.network + b.serverQueue + b.serverBatch + b.serverDecode + b.serverCompute +
                         b.serverEncode + b.clientRecv;
    EXPECT_NEAR(parts, r.latency.mean, r.latency.mean * 0.01);
    // One query at a time: a single connection, and no query ever waited for it.
    EXPECT_EQ(r.connections, 1);
    EXPECT_EQ(server.requests(), r.completed);
}

TEST(SingleStream, AConnectionTheServerClosedBetweenRequestsIsReopenedAndTheRequestSentAgain) {
    trainbench::testing::TestPredictServer server({.dropAfterEachAnswer = true});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::SingleStream;
    o.minQueryCount = 30;
    o.minDuration = 100ms;
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    EXPECT_EQ(r.failed, 0) << r.firstError;
    EXPECT_GE(r.completed, 30);
    EXPECT_EQ(server.requests(), r.completed);  // each request answered once: resent only when it had not arrived
}

TEST(SingleStream, AWarmConnectionTheServerClosedBeforeTheFirstRequestIsReopened) {
    trainbench::testing::TestPredictServer server({.dropFirstConnection = true});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::SingleStream;
    o.minQueryCount = 5;
    o.minDuration = 10ms;
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    EXPECT_EQ(r.failed, 0) << r.firstError;
    EXPECT_GE(r.completed, 5);
}

TEST(ConcurrencySweep, WritesPerfAnalyzersCsvColumns) {
    trainbench::testing::TestPredictServer server({.serviceTime = 1ms, .timingHeader = true});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::ConcurrencySweep;
    o.concurrency = {1, 2, 4};
    o.minQueryCount = 30;
    o.minDuration = 200ms;
    const LoadTestResult result = runLoadTest(o);
    ASSERT_EQ(result.runs.size(), 3u);
    for (const ScenarioResult& r : result.runs) EXPECT_EQ(r.failed, 0) << r.firstError;
    std::istringstream csv(perfAnalyzerCsv(result));
    std::string line;
    std::getline(csv, line);
    // perf_analyzer's header, as its documentation shows it.
    EXPECT_EQ(line,
              "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
              "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency");
    double previous = -1;
    int rows = 0;
    while (std::getline(csv, line)) {
        ++rows;
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), 12) << line;
        const double rate = std::stod(line.substr(line.find(',') + 1));
        EXPECT_GE(rate, previous) << "rows sorted by Inferences/Second";
        previous = rate;
    }
    EXPECT_EQ(rows, 3);
    const auto doc = resultJson(result);
    EXPECT_EQ(doc["kind"], "serve");
    EXPECT_EQ(doc["settings"]["scenario"], "concurrency");
    EXPECT_EQ(doc["runs"].size(), 3u);
    EXPECT_TRUE(doc["runs"][0]["per_second"].is_array());
    EXPECT_TRUE(doc["runs"][0]["latency"].contains("p99.9_us"));
}

TEST(Offline, SendsEveryQueryAtOnceOverThePool) {
    trainbench::testing::TestPredictServer server({.serviceTime = 1ms});
    LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
    o.scenario = Scenario::Offline;
    o.minQueryCount = 200;
    o.maxConnections = 8;
    const ScenarioResult r = runLoadTest(o).runs.at(0);
    ASSERT_EQ(r.failed, 0) << r.firstError;
    EXPECT_EQ(r.completed, 200);
    EXPECT_EQ(r.connections, 8);
    // All were due at the start: the last to be answered waited for the other 199 (1 ms each).
    EXPECT_GE(r.latency.max, 150'000.0);
}

TEST(LoadTest, AServerThatIsNotThereFailsWithItsAddressWithinTheConnectTimeout) {
    uint16_t port = 0;
    {
        trainbench::testing::TestPredictServer gone({});
        port = gone.port();
    }
    LoadTestOptions o = trainbench::testing::loopbackOptions(port);
    o.client.connectTimeout = 1s;
    const auto start = std::chrono::steady_clock::now();
    try {
        runLoadTest(o);
        FAIL() << "expected a LoadTestError";
    } catch (const LoadTestError& e) {
        EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

// A hostile or hung server: it accepts and reads every request and never answers. Each query fails
// at the request timeout (a failure with its reason, never a latency), and the run ends.
TEST(LoadTest, AServerThatNeverAnswersFailsEachQueryAtTheRequestTimeout) {
    namespace asio = boost::asio;
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    std::vector<std::shared_ptr<asio::ip::tcp::socket>> held;
    std::array<char, 4096> sink{};
    std::function<void(std::shared_ptr<asio::ip::tcp::socket>)> swallow = [&](auto socket) {
        socket->async_read_some(asio::buffer(sink), [&, socket](boost::system::error_code ec, size_t) {
            if (!ec) swallow(socket);
        });
    };
    std::function<void()> accept = [&] {
        acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket s) {
            if (ec) return;
            held.push_back(std::make_shared<asio::ip::tcp::socket>(std::move(s)));
            swallow(held.back());
            accept();
        });
    };
    accept();
    std::thread server([&] { io.run(); });

    LoadTestOptions o = trainbench::testing::loopbackOptions(acceptor.local_endpoint().port());
    o.minQueryCount = 3;
    o.minDuration = 0ms;
    o.client.requestTimeout = 500ms;
    const auto start = std::chrono::steady_clock::now();
    const LoadTestResult result = runLoadTest(o);
    const auto took = std::chrono::steady_clock::now() - start;
    asio::post(io, [&] {
        acceptor.close();
        for (auto& s : held) s->close();
    });
    server.join();

    ASSERT_EQ(result.runs.size(), 1u);
    const ScenarioResult& r = result.runs.front();
    EXPECT_EQ(r.completed, 0);
    EXPECT_EQ(r.failed, 3);
    EXPECT_EQ(r.latency.count, 0);  // a timed-out query is not a latency
    EXPECT_FALSE(r.firstError.empty());
    EXPECT_GE(took, 3 * 450ms);  // one query at a time, each waiting its timeout
    EXPECT_LT(took, 10s);
}

TEST(LoadTest, ImpossibleSettingsAreRefusedBeforeAnythingRuns) {
    trainbench::testing::TestPredictServer server({});
    const auto refusal = [&](auto change) {
        LoadTestOptions o = trainbench::testing::loopbackOptions(server.port());
        change(o);
        try {
            runLoadTest(o);
        } catch (const LoadTestError& e) {
            return std::string(e.what());
        }
        return std::string("(ran)");
    };
    EXPECT_NE(refusal([](LoadTestOptions& o) { o.examples.count = 0; }).find("no examples"), std::string::npos);
    EXPECT_NE(refusal([](LoadTestOptions& o) { o.maxConnections = 100'000; }).find("max connections"), std::string::npos);
    EXPECT_NE(refusal([](LoadTestOptions& o) {
                  o.scenario = Scenario::ConcurrencySweep;
                  o.concurrency = {1, 1'000'000};
              }).find("concurrency sweep"),
              std::string::npos);
    EXPECT_NE(refusal([](LoadTestOptions& o) { o.client.threads = 0; }).find("client threads"), std::string::npos);
    EXPECT_NE(refusal([](LoadTestOptions& o) {
                  o.scenario = Scenario::Server;
                  o.targetQps = 0;
              }).find("target QPS"),
              std::string::npos);
    EXPECT_EQ(server.requests(), 0);
}

}  // namespace
}  // namespace trainbench::app::loadtest
