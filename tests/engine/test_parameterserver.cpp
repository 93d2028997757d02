// A parameter server on loopback, driven through real sockets: its updates are exactly those of the
// same optimizer run locally (also across a checkpoint and resume), staleness counts the updates
// between a worker's pull and its push, and every kind of bad client (wrong token, no Hello,
// malformed frames, wrong sizes, messages out of turn) is told why and closed while the others are
// served; a connection that finds the server out of file descriptors is served once one is free; a
// flood of idle connections is capped and real peers still get in. The coordinator's Shutdown ends
// the server; its disappearance, silence or absence fails it; a stop request ends its wait.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/optim/optimizer.h"
#include "engine/strategy/framedclient.h"
#include "engine/strategy/parameterserver.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"
#include "idleflood.h"
#include "pstestutil.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;

using namespace std::chrono_literals;
using test::errorOf;
using test::expectSameBits;
using test::kJobToken;
using test::testValues;

// The shard of these tests: two variables of the flat buffer, 12 values packed.
const std::vector<ps::Span> kShard = {{0, 7}, {20, 5}};
constexpr size_t kShardSize = 12;

OptimizerConfig sgdMomentum() {
    OptimizerConfig c;
    c.kind = OptimizerKind::SGD;
    c.learning_rate = 0.1f;
    c.momentum = 0.9f;
    return c;
}

// What the server reported, from its thread.
class Reports {
public:
    std::function<void(const std::string&)> sink() {
        return [this](const std::string& line) {
            std::lock_guard lock(mutex_);
            text_ += line + "\n";
        };
    }
    std::string text() {
        std::lock_guard lock(mutex_);
        return text_;
    }

private:
    std::mutex mutex_;
    std::string text_;
};

std::unique_ptr<ParameterServer> startServer(uint32_t index, const OptimizerConfig& optimizer, Reports* reports = nullptr,
                                             std::chrono::milliseconds helloTimeout = 10s,
                                             std::chrono::milliseconds timeout = 30s,
                                             std::chrono::milliseconds connectTimeout = 60s) {
    ParameterServerConfig c;
    c.token = kJobToken;
    c.index = index;
    c.optimizer = optimizer;
    c.helloTimeout = helloTimeout;
    c.timeout = timeout;
    c.connectTimeout = connectTimeout;
    c.report = reports ? reports->sink() : [](const std::string&) {};
    return std::make_unique<ParameterServer>(std::move(c));
}

std::unique_ptr<FramedClient> dial(const ParameterServer& server) {
    return std::make_unique<FramedClient>("127.0.0.1", server.port(), "parameter server", 5s, 5s);
}

// A connection that said Hello as `role` and was welcomed.
std::unique_ptr<FramedClient> connectAs(const ParameterServer& server, ps::Role role, uint32_t index = 0) {
    auto c = dial(server);
    c->send(ps::Hello{kJobToken, role, index}.encode());
    const ps::Welcome w = ps::Welcome::decode(c->receive(5s));
    EXPECT_EQ(w.role, ps::Role::ParameterServer);
    return c;
}

template <class Reply>
Reply request(FramedClient& c, const std::string& frame) {
    c.send(frame);
    return Reply::decode(c.receive(5s));
}

// The reason a server gives when it closes a connection after `frame`.
std::string refusal(FramedClient& c, const std::string& frame) {
    c.send(frame);
    return errorOf<ConnectionError>([&] { c.receive(5s); });
}

ps::Init initOf(uint32_t server, const std::vector<float>& values, int64_t baseStep = 0,
                std::vector<ps::StateBlock> state = {}) {
    ps::Init m;
    m.server = server;
    m.base_step = baseStep;
    m.spans = kShard;
    m.values = values;
    m.state = std::move(state);
    return m;
}

// A server initialized with `values`, and its coordinator.
struct Initialized {
    std::unique_ptr<ParameterServer> server;
    std::unique_ptr<FramedClient> coordinator;
};
Initialized initialized(const OptimizerConfig& optimizer, const std::vector<float>& values, Reports* reports = nullptr) {
    Initialized s;
    s.server = startServer(0, optimizer, reports);
    s.coordinator = connectAs(*s.server, ps::Role::Coordinator);
    EXPECT_EQ(request<ps::InitDone>(*s.coordinator, initOf(0, values).encode()).version, 0u);
    return s;
}

TEST(ParameterServer, PushesUpdateTheShardExactlyAsTheSameOptimizerLocally) {
    const std::vector<float> initial = testValues(kShardSize, 1);
    auto s = initialized(adam(), initial);
    auto worker = connectAs(*s.server, ps::Role::Worker, 3);
    auto local = Optimizer::create(adam(), kShardSize);
    std::vector<float> expected = initial;
    for (int64_t step = 1; step <= 4; ++step) {
        const ps::Params pulled = request<ps::Params>(*worker, ps::Pull{step}.encode());
        EXPECT_EQ(pulled.version, static_cast<uint64_t>(step - 1));
        expectSameBits(pulled.values, expected, "pulled before step " + std::to_string(step));
        const std::vector<float> grad = testValues(kShardSize, 100 + static_cast<uint64_t>(step));
        const ps::Pushed pushed = request<ps::Pushed>(*worker, ps::Push{step, pulled.version, 3, grad}.encode());
        EXPECT_EQ(pushed.version, static_cast<uint64_t>(step));
        EXPECT_EQ(pushed.staleness, 0u);
        local->step(expected.data(), grad.data(), kShardSize, step);
    }
    // The coordinator may pull too (e.g. to evaluate).
    expectSameBits(request<ps::Params>(*s.coordinator, ps::Pull{0}.encode()).values, expected, "after 4 steps");
    EXPECT_EQ(s.server->updatesApplied(), 4);
    EXPECT_EQ(s.server->pullsServed(), 5);
}

TEST(ParameterServer, StalenessIsTheNumberOfUpdatesBetweenPullAndPush) {
    auto s = initialized(sgdMomentum(), testValues(kShardSize, 1));
    auto a = connectAs(*s.server, ps::Role::Worker, 0);
    auto b = connectAs(*s.server, ps::Role::Worker, 1);
    const std::vector<float> grad = testValues(kShardSize, 2);
    const uint64_t aPulled = request<ps::Params>(*a, ps::Pull{1}.encode()).version;
    EXPECT_EQ(aPulled, 0u);
    // B pulls and pushes twice while A computes.
    for (int64_t step = 2; step <= 3; ++step) {
        const uint64_t v = request<ps::Params>(*b, ps::Pull{step}.encode()).version;
        const ps::Pushed p = request<ps::Pushed>(*b, ps::Push{step, v, 1, grad}.encode());
        EXPECT_EQ(p.staleness, 0u);
        EXPECT_EQ(p.version, v + 1);
    }
    const ps::Pushed late = request<ps::Pushed>(*a, ps::Push{1, aPulled, 0, grad}.encode());
    EXPECT_EQ(late.staleness, 2u);
    EXPECT_EQ(late.version, 3u);
    // A version the shard never had is a broken worker.
    EXPECT_NE(refusal(*b, ps::Push{4, 9, 1, grad}.encode()).find("pulled version 9 is newer than the shard's version 3"),
              std::string::npos);
}

TEST(ParameterServer, GetStateReturnsTheValuesAndTheOptimizerState) {
    const std::vector<float> initial = testValues(kShardSize, 1);
    auto s = initialized(adam(), initial);
    auto worker = connectAs(*s.server, ps::Role::Worker, 0);
    auto local = Optimizer::create(adam(), kShardSize);
    std::vector<float> expected = initial;
    for (int64_t step = 1; step <= 3; ++step) {
        const std::vector<float> grad = testValues(kShardSize, 10 + static_cast<uint64_t>(step));
        request<ps::Pushed>(*worker, ps::Push{step, static_cast<uint64_t>(step - 1), 0, grad}.encode());
        local->step(expected.data(), grad.data(), kShardSize, step);
    }
    const ps::State state = request<ps::State>(*s.coordinator, ps::GetState{}.encode());
    EXPECT_EQ(state.version, 3u);
    expectSameBits(state.values, expected, "values");
    const auto localState = local->state();
    ASSERT_EQ(state.state.size(), localState.size());
    for (size_t i = 0; i < localState.size(); ++i) {
        EXPECT_EQ(state.state[i].name, localState[i].name);
        expectSameBits(state.state[i].values, std::vector<float>(localState[i].values.begin(), localState[i].values.end()),
                       localState[i].name);
    }
}

// Runs 5 updates on one server, or 3 on one, a checkpoint (GetState), and 2 on a fresh server
// initialized from it with base_step 3; returns the values.
std::vector<float> trainFiveSteps(const OptimizerConfig& optimizer, bool resume) {
    const std::vector<float> initial = testValues(kShardSize, 1);
    auto s = initialized(optimizer, initial);
    auto worker = connectAs(*s.server, ps::Role::Worker, 0);
    uint64_t version = 0;
    for (int64_t step = 1; step <= 5; ++step) {
        if (resume && step == 4) {
            const ps::State saved = request<ps::State>(*s.coordinator, ps::GetState{}.encode());
            s.coordinator->send(ps::Shutdown{}.encode());
            s.server->waitUntilDone();
            worker.reset();
            s = Initialized{};
            s.server = startServer(0, optimizer);
            s.coordinator = connectAs(*s.server, ps::Role::Coordinator);
            request<ps::InitDone>(*s.coordinator, initOf(0, saved.values, /*baseStep=*/3, saved.state).encode());
            worker = connectAs(*s.server, ps::Role::Worker, 0);
            version = 0;
        }
        const std::vector<float> grad = testValues(kShardSize, 10 + static_cast<uint64_t>(step));
        version = request<ps::Pushed>(*worker, ps::Push{step, version, 0, grad}.encode()).version;
    }
    return request<ps::Params>(*s.coordinator, ps::Pull{0}.encode()).values;
}

TEST(ParameterServer, AResumedShardContinuesExactlyLikeAnUninterruptedOne) {
    for (const OptimizerConfig& optimizer : {adam(), sgdMomentum()}) {
        const std::vector<float> uninterrupted = trainFiveSteps(optimizer, false);
        auto local = Optimizer::create(optimizer, kShardSize);
        std::vector<float> expected = testValues(kShardSize, 1);
        for (int64_t step = 1; step <= 5; ++step)
            local->step(expected.data(), testValues(kShardSize, 10 + static_cast<uint64_t>(step)).data(), kShardSize, step);
        const char* name = optimizer.kind == OptimizerKind::Adam ? "adam" : "sgd with momentum";
        expectSameBits(uninterrupted, expected, std::string(name) + ", uninterrupted");
        expectSameBits(trainFiveSteps(optimizer, true), expected, std::string(name) + ", resumed after 3 steps");
    }
}

TEST(ParameterServer, BaseStepDrivesAdamsBiasCorrection) {
    // The same state, values and gradient as update 1 or as update 4: Adam's step differs, so a
    // resumed shard must be told how many updates came before.
    std::vector<float> asFirst = testValues(kShardSize, 1), asFourth = asFirst;
    const std::vector<float> grad = testValues(kShardSize, 2);
    for (auto [base, values] : {std::pair{int64_t{0}, &asFirst}, std::pair{int64_t{3}, &asFourth}}) {
        auto server = startServer(0, adam());
        auto coordinator = connectAs(*server, ps::Role::Coordinator);
        request<ps::InitDone>(*coordinator, initOf(0, *values, base).encode());
        auto worker = connectAs(*server, ps::Role::Worker, 0);
        request<ps::Pushed>(*worker, ps::Push{1, 0, 0, grad}.encode());
        *values = request<ps::Params>(*coordinator, ps::Pull{0}.encode()).values;
    }
    auto local = Optimizer::create(adam(), kShardSize);
    std::vector<float> expected = testValues(kShardSize, 1);
    local->step(expected.data(), grad.data(), kShardSize, 4);
    expectSameBits(asFourth, expected, "update 4 of a fresh Adam");
    EXPECT_NE(asFirst, asFourth);
}

TEST(ParameterServer, AWrongTokenIsRefusedWithTheReasonAndCounted) {
    Reports reports;
    auto server = startServer(0, adam(), &reports);
    auto c = dial(*server);
    const std::string why = refusal(*c, ps::Hello{"not the token", ps::Role::Worker, 0}.encode());
    EXPECT_NE(why.find("parameter server: closed the connection: wrong job token"), std::string::npos) << why;
    EXPECT_EQ(server->rejectedConnections(), 1);
    EXPECT_NE(reports.text().find("parameter server 0 at 127.0.0.1:" + std::to_string(server->port()) +
                                  ": closed the connection from 127.0.0.1:"),
              std::string::npos)
        << reports.text();
    EXPECT_NE(reports.text().find("wrong job token"), std::string::npos);
}

TEST(ParameterServer, AConnectionWithoutHelloIsClosedAfterTheTimeout) {
    auto server = startServer(0, adam(), nullptr, 50ms);
    test::FrameSocket raw = test::FrameSocket::connectTo(server->port());
    const auto error = raw.receive();
    ASSERT_TRUE(error);
    EXPECT_EQ(ps::ErrorMessage::decode(*error).message, "no Hello with the job token within 50 ms");
    EXPECT_FALSE(raw.receive());
    EXPECT_TRUE(raw.closed());
}

TEST(ParameterServer, AMalformedFrameClosesOnlyItsOwnConnection) {
    Reports reports;
    auto s = initialized(adam(), testValues(kShardSize, 1), &reports);
    auto good = connectAs(*s.server, ps::Role::Worker, 0);

    // Another protocol version, after a proper Hello: the error names the frame's byte offset.
    test::FrameSocket raw = test::FrameSocket::connectTo(s.server->port());
    const std::string hello = ps::Hello{kJobToken, ps::Role::Worker, 1}.encode();
    raw.send(hello);
    ASSERT_TRUE(raw.receive());  // Welcome
    std::string pull = ps::Pull{1}.encode();
    pull[4] = 2;
    raw.send(pull);
    auto error = raw.receive();
    ASSERT_TRUE(error);
    EXPECT_EQ(ps::ErrorMessage::decode(*error).message,
              "protocol version 2 at byte offset " + std::to_string(hello.size()) + " (this build speaks version 1)");
    EXPECT_FALSE(raw.receive());
    EXPECT_TRUE(raw.closed());

    // Not our protocol at all.
    test::FrameSocket http = test::FrameSocket::connectTo(s.server->port());
    http.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    error = http.receive();
    ASSERT_TRUE(error);
    EXPECT_EQ(ps::ErrorMessage::decode(*error).message,
              "bad magic 0x20544547 at byte offset 0 (expected 0x53504254: not a trainbench message)");

    // A payload that does not parse.
    test::FrameSocket garbled = test::FrameSocket::connectTo(s.server->port());
    garbled.send(hello);
    ASSERT_TRUE(garbled.receive());
    garbled.send(framing::encode(ps::kPush, "\x01\x02\x03"));
    error = garbled.receive();
    ASSERT_TRUE(error);
    EXPECT_EQ(ps::ErrorMessage::decode(*error).message, "Push message: field 'step' needs 8 bytes, 3 are left");

    // The others are still served.
    EXPECT_EQ(request<ps::Params>(*good, ps::Pull{1}.encode()).values.size(), kShardSize);
    EXPECT_EQ(s.server->rejectedConnections(), 3);
    EXPECT_NE(reports.text().find("(worker 1): protocol version 2"), std::string::npos) << reports.text();
}

// A server that runs out of file descriptors cannot accept a connection; it keeps trying (without
// spinning its io thread) and serves the connection once a descriptor is free again.
TEST(ParameterServer, AConnectionWaitingForAFreeDescriptorIsServedOnceOneIsFree) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    rlimit original{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
    // Every descriptor this process may open, but one, held on /dev/null; that one is the client's.
    const int used = [] {
        int n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
        return n;
    }();
    // Descriptors held on /dev/null, and the process's limit lowered, until release() (or the end of
    // the test, should an assertion stop it first, so that its report can still be written).
    struct Starved {
        rlimit original;
        std::vector<int> held;
        bool release() {
            for (int fd : held) ::close(fd);
            held.clear();
            return ::setrlimit(RLIMIT_NOFILE, &original) == 0;
        }
        ~Starved() { release(); }
    } starved{original, {}};
    rlimit tight = original;
    tight.rlim_cur = static_cast<rlim_t>(used + 8);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
    for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) starved.held.push_back(fd);
    ASSERT_EQ(errno, EMFILE);
    ::close(starved.held.back());
    starved.held.pop_back();

    test::FrameSocket client = test::FrameSocket::connectTo(s.server->port());  // the kernel completes it
    client.send(ps::Hello{kJobToken, ps::Role::Worker, 0}.encode());
    EXPECT_FALSE(client.receive(300ms)) << "the server accepted without a free descriptor";
    EXPECT_FALSE(client.closed());

    ASSERT_TRUE(starved.release());
    const auto welcome = client.receive(5s);
    ASSERT_TRUE(welcome) << "not accepted once descriptors were free";
    EXPECT_EQ(ps::Welcome::decode(*welcome).role, ps::Role::ParameterServer);
    client.send(ps::Pull{1}.encode());
    const auto params = client.receive(5s);
    ASSERT_TRUE(params);
    EXPECT_EQ(ps::Params::decode(*params).values.size(), kShardSize);
}

TEST(ParameterServer, AHelloFollowedAtOnceByRequestsIsServed) {
    // A client need not wait for Welcome: the frames after Hello in the same packet are read too.
    auto s = initialized(adam(), testValues(kShardSize, 1));
    test::FrameSocket raw = test::FrameSocket::connectTo(s.server->port());
    raw.send(ps::Hello{kJobToken, ps::Role::Worker, 2}.encode() + ps::Pull{1}.encode());
    auto welcome = raw.receive(), params = raw.receive();
    ASSERT_TRUE(welcome && params);
    EXPECT_EQ(ps::Welcome::decode(*welcome).index, 0u);
    EXPECT_EQ(ps::Params::decode(*params).values.size(), kShardSize);
}

TEST(ParameterServer, APushOfTheWrongSizeIsRefusedNamingBothSizes) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    auto worker = connectAs(*s.server, ps::Role::Worker, 2);
    const std::string why = refusal(*worker, ps::Push{5, 0, 2, {1.0f, 2.0f, 3.0f}}.encode());
    EXPECT_NE(why.find("Push message from worker 2 for step 5: a gradient of 3 values, the shard of parameter server 0 "
                       "holds 12"),
              std::string::npos)
        << why;
    EXPECT_EQ(s.server->updatesApplied(), 0);
}

TEST(ParameterServer, PullBeforeInitIsRefused) {
    auto server = startServer(0, adam());
    auto worker = connectAs(*server, ps::Role::Worker, 0);
    EXPECT_NE(refusal(*worker, ps::Pull{1}.encode()).find("Pull message before Init: the shard is not initialized yet"),
              std::string::npos);
}

TEST(ParameterServer, MessagesOutOfRoleAreRefused) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    auto worker = connectAs(*s.server, ps::Role::Worker, 0);
    EXPECT_NE(refusal(*worker, initOf(0, testValues(kShardSize, 1)).encode()).find("unexpected Init message from a worker"),
              std::string::npos);
    auto second = dial(*s.server);
    EXPECT_NE(refusal(*second, ps::Hello{kJobToken, ps::Role::Coordinator, 0}.encode())
                  .find("a coordinator is connected already"),
              std::string::npos);
    auto early = dial(*s.server);
    EXPECT_NE(refusal(*early, ps::Pull{1}.encode()).find("Pull message before Hello"), std::string::npos);
}

TEST(ParameterServer, AnInitThatDoesNotFitIsRefusedAndFailsTheServer) {
    auto server = startServer(0, adam());
    auto coordinator = connectAs(*server, ps::Role::Coordinator);
    EXPECT_NE(refusal(*coordinator, initOf(1, testValues(kShardSize, 1)).encode())
                  .find("Init message for parameter server 1 reached parameter server 0"),
              std::string::npos);
    const std::string why = errorOf<ConnectionError>([&] { server->waitUntilDone(); });
    EXPECT_NE(why.find("this server closed the coordinator's connection: Init message for parameter server 1"),
              std::string::npos)
        << why;

    auto other = startServer(0, adam());
    auto c = connectAs(*other, ps::Role::Coordinator);
    const auto values = testValues(kShardSize, 1);
    EXPECT_NE(refusal(*c, initOf(0, values, 0, {{"sgd.momentum", values}}).encode())
                  .find("optimizer state blocks (sgd.momentum) are not the ones this server's optimizer keeps "
                        "(adam.m, adam.v)"),
              std::string::npos);
}

TEST(ParameterServer, TheCoordinatorLeavingWithoutShutdownFailsTheServer) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    s.coordinator.reset();
    const std::string why = errorOf<ConnectionError>([&] { s.server->waitUntilDone(); });
    EXPECT_EQ(why, "parameter server 0 at 127.0.0.1:" + std::to_string(s.server->port()) +
                       ": the coordinator closed its connection without Shutdown");
}

TEST(ParameterServer, ShutdownEndsTheServersWait) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    s.coordinator->send(ps::Shutdown{}.encode());
    s.server->waitUntilDone();
    s.coordinator.reset();  // leaving after Shutdown is no failure
    s.server->waitUntilDone();
}

TEST(ParameterServer, ListeningOnATakenPortFailsNamingIt) {
    auto first = startServer(0, adam());
    ParameterServerConfig c;
    c.token = kJobToken;
    c.port = first->port();
    const std::string why = errorOf<ConnectionError>([&] { ParameterServer second(c); });
    EXPECT_NE(why.find("cannot listen on 127.0.0.1:" + std::to_string(first->port())), std::string::npos) << why;
}

// waitUntilDone() on another thread: its result, or what it threw. endsWithin() stops the server
// when the wait outlives `limit`, so that a test of a build that waits forever fails rather than hangs.
struct Wait {
    std::future<bool> result;
    bool endsWithin(std::chrono::milliseconds limit, ParameterServer& server) {
        if (result.wait_for(limit) == std::future_status::ready) return true;
        server.stop();  // what ends it on a build that waits forever
        return false;
    }
};
Wait waitInBackground(ParameterServer& server, const std::atomic<bool>* stop = nullptr) {
    return Wait{std::async(std::launch::async, [&server, stop] { return server.waitUntilDone(stop); })};
}

// A coordinator that stops (SIGSTOP, a frozen host) keeps its connection open and says nothing:
// after the timeout the server gives up on it, naming it, instead of serving a job that is gone.
TEST(ParameterServer, ACoordinatorThatFallsSilentFailsTheServerAfterTheTimeout) {
    auto server = startServer(0, adam(), nullptr, 10s, 500ms);
    auto coordinator = connectAs(*server, ps::Role::Coordinator);
    EXPECT_EQ(request<ps::InitDone>(*coordinator, initOf(0, testValues(kShardSize, 1)).encode()).version, 0u);
    Wait wait = waitInBackground(*server);
    ASSERT_TRUE(wait.endsWithin(10s, *server)) << "still serving 10 s after the coordinator fell silent (timeout 500 ms)";
    const std::string why = errorOf<ConnectionError>([&] { wait.result.get(); });
    EXPECT_NE(why.find("parameter server 0 at 127.0.0.1:" + std::to_string(server->port()) +
                       ": the coordinator (127.0.0.1:"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find(") sent nothing for 0.5 s (stopped, hung or cut off)"), std::string::npos) << why;
}

// Between its requests the coordinator sends heartbeats: the server serves on, however long the job.
TEST(ParameterServer, HeartbeatsKeepAnIdleCoordinatorsJobGoing) {
    auto server = startServer(0, adam(), nullptr, 10s, 1s);
    auto coordinator = connectAs(*server, ps::Role::Coordinator);
    Wait wait = waitInBackground(*server);
    for (int i = 0; i < 30; ++i) {  // three timeouts
        coordinator->send(ps::Heartbeat{}.encode());
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(wait.result.wait_for(0ms), std::future_status::timeout) << "the server gave up on a live coordinator";
    coordinator->send(ps::Shutdown{}.encode());
    ASSERT_TRUE(wait.endsWithin(10s, *server));
    EXPECT_TRUE(wait.result.get());
}

TEST(ParameterServer, NoCoordinatorWithinTheConnectTimeoutFailsTheServer) {
    auto server = startServer(0, adam(), nullptr, 10s, 30s, 200ms);
    auto worker = connectAs(*server, ps::Role::Worker, 0);  // workers are no coordinator
    Wait wait = waitInBackground(*server);
    ASSERT_TRUE(wait.endsWithin(10s, *server));
    const std::string why = errorOf<ConnectionError>([&] { wait.result.get(); });
    EXPECT_NE(why.find(": no coordinator connected within 0.2 s"), std::string::npos) << why;
}

TEST(ParameterServer, AStopRequestEndsTheWait) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    std::atomic<bool> stop{false};
    Wait wait = waitInBackground(*s.server, &stop);
    stop = true;
    ASSERT_TRUE(wait.endsWithin(10s, *s.server));
    EXPECT_FALSE(wait.result.get());
}

// More idle connections than PendingLimit allows: the ones over the cap are closed at once and
// counted, a real worker still says Hello and pulls, and the places are free once the flood is gone.
TEST(ParameterServer, AFloodOfIdleConnectionsIsCappedAndRealPeersStillGetIn) {
    auto s = initialized(adam(), testValues(kShardSize, 1));
    ParameterServer& server = *s.server;
    test::expectIdleFloodIsCapped(server.port(),
                                  {[&] { return server.pendingConnections(); }, [&] { return server.rejectedConnections(); }},
                                  [&] {
                                      auto worker = connectAs(server, ps::Role::Worker, 0);
                                      EXPECT_EQ(request<ps::Params>(*worker, ps::Pull{1}.encode()).values.size(), kShardSize);
                                  });
}

}  // namespace

}  // namespace trainbench::engine
