// The coordinator of a parameter_server job (ParameterServerStrategy) on loopback: a worker with no
// task hears heartbeats from it, and so do the parameter servers between its requests, so a job
// whose chief is quiet for several timeouts (evaluating, checkpointing) goes on; a flood of idle
// connections is capped and a real worker still joins.
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "engine/strategy/parameterserver.h"
#include "engine/strategy/parameterserverstrategy.h"
#include "engine/strategy/psprotocol.h"
#include "engine/strategy/psworker.h"
#include "idleflood.h"
#include "pstestutil.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;
using test::FrameSocket;
using test::kJobToken;

const Dims kShape{1, 2, 2};
constexpr int64_t kClasses = 3;
constexpr int64_t kRows = 8;

// A coordinator of one worker and the parameter server at `server` (never contacted before the
// first step), with the job's `timeout`.
std::unique_ptr<ParameterServerStrategy> coordinator(std::chrono::milliseconds timeout, int serverPort = 1) {
    ParameterServerStrategyConfig c;
    c.listen = {"127.0.0.1", 0};
    c.token = kJobToken;
    c.servers = {{"127.0.0.1", serverPort}};
    c.workers = 1;
    c.timeout = timeout;
    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::SGD;
    sgd.learning_rate = 0.1f;
    return std::make_unique<ParameterServerStrategy>(
        c, ReplicaSpec{.model = test::denseModel(6, kClasses), .sampleShape = kShape, .numClasses = kClasses,
                       .optimizer = sgd, .seed = 3, .threads = 1});
}

// Hello as worker 0, and the coordinator's Welcome and JobLayout.
FrameSocket joinAsWorker(uint16_t port) {
    FrameSocket w = FrameSocket::connectTo(port);
    w.send(ps::Hello{kJobToken, ps::Role::Worker, 0}.encode());
    const auto welcome = w.receive(5s), layout = w.receive(5s);
    EXPECT_TRUE(welcome && welcome->type == ps::kWelcome);
    EXPECT_TRUE(layout && layout->type == ps::kJobLayout);
    return w;
}

// A worker with nothing to do is told the coordinator is alive: without that it could not tell a
// coordinator with no task for it from one that stopped.
TEST(Coordinator, AWorkerWithoutATaskHearsHeartbeats) {
    auto c = coordinator(1s);
    FrameSocket worker = joinAsWorker(c->port());
    int heartbeats = 0;
    const auto until = std::chrono::steady_clock::now() + 3s;  // three timeouts
    while (std::chrono::steady_clock::now() < until) {
        worker.send(ps::Heartbeat{}.encode());  // as a worker does: a silent one would be lost
        const auto f = worker.receive(1s);
        ASSERT_TRUE(f) << "nothing from the coordinator for its timeout (1 s) after " << heartbeats << " heartbeat(s)";
        EXPECT_EQ(f->type, ps::kHeartbeat);
        ++heartbeats;
    }
    EXPECT_GE(heartbeats, 3);
}

// Real parameter server and worker with a 1 s timeout; between two steps the chief is quiet for
// three timeouts (as while it evaluates): the heartbeats keep the server and the worker in the job.
TEST(Coordinator, AQuietChiefKeepsItsServersAndWorkersAlive) {
    ParameterServerConfig sc;
    sc.token = kJobToken;
    sc.timeout = 1s;
    sc.report = [](const std::string&) {};
    ParameterServer server(sc);
    auto c = coordinator(1s, server.port());
    PsWorkerConfig wc;
    wc.coordinatorPort = c->port();
    wc.token = kJobToken;
    wc.model = test::denseModel(6, kClasses);
    wc.connectTimeout = 5s;
    wc.timeout = 1s;
    PsWorkerSummary summary;
    std::exception_ptr workerError;
    std::thread worker([&] {
        try {
            summary = runParameterServerWorker(wc, {});
        } catch (...) {
            workerError = std::current_exception();
        }
    });
    std::vector<float> x = test::testValues(static_cast<size_t>(kRows * 4), 1);
    std::vector<int32_t> y(static_cast<size_t>(kRows), 1);
    for (int64_t step = 1; step <= 2; ++step) {
        if (step == 2) std::this_thread::sleep_for(3s);  // the quiet time is what this test is about
        c->dispatch(BatchView{x.data(), y.data(), kRows}, step, 7);
        EXPECT_EQ(c->completed(true).size(), 1u) << "step " << step;
    }
    c->finish();
    worker.join();
    if (workerError) std::rethrow_exception(workerError);
    EXPECT_EQ(summary.steps, 2);
    EXPECT_TRUE(server.waitUntilDone());
}

// More idle connections than PendingLimit allows: the ones over the cap are closed at once and
// counted, a real worker still joins, and the places are free once the flood is gone.
TEST(Coordinator, AFloodOfIdleConnectionsIsCappedAndRealPeersStillGetIn) {
    auto c = coordinator(30s);
    test::expectIdleFloodIsCapped(c->port(),
                                  {[&] { return c->stats().pending_connections; },
                                   [&] { return c->stats().rejected_connections; }},
                                  [&] { joinAsWorker(c->port()); });
}

}  // namespace
}  // namespace trainbench::engine
