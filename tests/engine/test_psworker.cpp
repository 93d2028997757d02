// A parameter_server worker against real parameter servers and a coordinator played by the test:
// a step's loss and the servers' values after its push are exactly those of the same step computed
// locally (with one and two servers); it keeps the coordinator posted with heartbeats; a server
// that fails, or stops reading a push, is reported with PsLost and ends the worker within the
// timeout; a coordinator that falls silent ends it, one that sends heartbeats keeps it waiting; a
// model or a task that does not fit the job is refused with the reason; Shutdown ends it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/strategy/framedclient.h"
#include "engine/strategy/parameterserver.h"
#include "engine/strategy/psprotocol.h"
#include "engine/strategy/psworker.h"
#include "engine/strategy/shardconnections.h"
#include "engine/util/errors.h"
#include "pstestutil.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;

using namespace std::chrono_literals;
using test::errorOf;
using test::expectSameBits;
using test::FrameSocket;
using test::kJobToken;

const Dims kShape{1, 2, 2};
constexpr int64_t kClasses = 3;
constexpr int64_t kRows = 8;

ModelSpec tinyModel() { return test::denseModel(6, static_cast<int>(kClasses)); }

ps::Task task(int64_t step, uint32_t attempt = 0) {
    ps::Task t;
    t.step = step;
    t.attempt = attempt;
    t.seed = 1000 + static_cast<uint64_t>(step);
    t.rows = kRows;
    t.x = test::testValues(static_cast<size_t>(kRows * 4), static_cast<uint64_t>(step));
    for (int64_t i = 0; i < kRows; ++i) t.y.push_back(static_cast<int32_t>((i + step) % kClasses));
    return t;
}

// The parameter servers of a job, initialized (as the coordinator would) with the initial values of
// a reference model built on this thread, which then computes the expected steps.
class Job {
public:
    explicit Job(int servers) : device_(1), reference_(tinyModel(), kShape, kClasses, device_, 7) {
        values_.assign(reference_.params(), reference_.params() + reference_.paramCount());
        std::vector<ps::Span> variables;
        for (auto [offset, count] : reference_.gradientSpans()) {
            variables.push_back({offset, count - 2});  // weights and biases apart, as TensorFlow's variables
            variables.push_back({offset + count - 2, 2});
        }
        std::sort(variables.begin(), variables.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
        shards_ = ps::shardVariables(variables, servers);
        for (int k = 0; k < servers; ++k) {
            ParameterServerConfig c;
            c.token = kJobToken;
            c.index = static_cast<uint32_t>(k);
            c.optimizer = adam();
            c.report = [](const std::string&) {};
            servers_.push_back(std::make_unique<ParameterServer>(c));
            links_.push_back(std::make_unique<FramedClient>("127.0.0.1", servers_.back()->port(), "server", 5s, 5s));
            links_.back()->send(ps::Hello{kJobToken, ps::Role::Coordinator, 0}.encode());
            ps::Welcome::decode(links_.back()->receive(5s));
            ps::Init init;
            init.server = static_cast<uint32_t>(k);
            init.spans = shards_[static_cast<size_t>(k)];
            init.values.resize(static_cast<size_t>(ps::shardSize(init.spans)));
            ps::gather(values_.data(), init.spans, init.values.data());
            links_.back()->send(init.encode());
            ps::InitDone::decode(links_.back()->receive(5s));
        }
    }

    ps::JobLayout layout() const {
        ps::JobLayout l;
        l.channels = kShape[0], l.height = kShape[1], l.width = kShape[2], l.classes = kClasses;
        l.param_count = reference_.paramCount();
        l.heartbeat_ms = 10;
        for (const auto& s : servers_) l.servers.push_back(s->address());
        l.shards = shards_;
        return l;
    }

    // The step the worker should take: its loss, and the values each server should hold after it.
    double expectStep(ps::Task t) {
        std::copy(values_.begin(), values_.end(), reference_.params());
        Tensor& logits = reference_.forward(t.x.data(), t.rows, true, t.seed);
        device_.stream().wait();
        Tensor gradLogits(Tensor::plainDesc({t.rows, kClasses}), device_.engine());
        const double loss = SoftmaxCrossEntropy::compute(logits, t.y.data(), &gradLogits, t.rows).loss;
        reference_.backward(gradLogits);
        device_.stream().wait();
        optimizer_->step(values_.data(), reference_.grads(), reference_.paramCount(), ++steps_);
        return loss;
    }

    // What server k holds, next to what it should.
    void expectServerValues(size_t k) {
        links_[k]->send(ps::Pull{0}.encode());
        const ps::Params p = ps::Params::decode(links_[k]->receive(5s));
        EXPECT_EQ(p.version, static_cast<uint64_t>(steps_));
        std::vector<float> expected(static_cast<size_t>(ps::shardSize(shards_[k])));
        ps::gather(values_.data(), shards_[k], expected.data());
        expectSameBits(p.values, expected, "parameter server " + std::to_string(k) + " after step " + std::to_string(steps_));
    }

    ParameterServer& server(size_t k) { return *servers_[k]; }
    size_t size() const { return servers_.size(); }

private:
    CpuDevice device_;
    Model reference_;
    std::unique_ptr<Optimizer> optimizer_ = Optimizer::create(adam(), reference_.paramCount());
    std::vector<float> values_;  // the flat parameters the servers should hold
    int64_t steps_ = 0;
    std::vector<std::vector<ps::Span>> shards_;
    std::vector<std::unique_ptr<ParameterServer>> servers_;
    std::vector<std::unique_ptr<FramedClient>> links_;  // the coordinator's connections to the servers
};

// runParameterServerWorker on a thread of its own.
class WorkerThread {
public:
    explicit WorkerThread(uint16_t coordinatorPort, std::chrono::milliseconds timeout = 5s,
                          const ModelSpec& model = tinyModel()) {
        PsWorkerConfig c;
        c.coordinatorPort = coordinatorPort;
        c.token = kJobToken;
        c.model = model;
        c.seed = 99;  // other initial values than the servers': the first pull must replace them
        c.connectTimeout = 5s;
        c.timeout = timeout;
        thread_ = std::thread([this, c] {
            try {
                summary_ = runParameterServerWorker(c, {});
            } catch (...) {
                error_ = std::current_exception();
            }
            done_.set_value();
        });
    }
    ~WorkerThread() {
        if (thread_.joinable()) thread_.join();
    }
    // Whether the worker has ended within `limit`.
    bool endsWithin(std::chrono::milliseconds limit) { return ended_.wait_for(limit) == std::future_status::ready; }
    // Waits for the worker to end: its summary, or what it threw.
    PsWorkerSummary result() {
        thread_.join();
        if (error_) std::rethrow_exception(error_);
        return summary_;
    }

private:
    std::promise<void> done_;
    std::future<void> ended_ = done_.get_future();
    std::thread thread_;
    PsWorkerSummary summary_;
    std::exception_ptr error_;
};

// The coordinator's side of the worker's Hello, then the job's layout.
void admit(FrameSocket& coordinator, const ps::JobLayout& layout) {
    const auto hello = coordinator.receive();
    ASSERT_TRUE(hello);
    const ps::Hello h = ps::Hello::decode(*hello);
    EXPECT_EQ(h.token, kJobToken);
    EXPECT_EQ(h.role, ps::Role::Worker);
    coordinator.send(ps::Welcome{ps::Role::Coordinator, 0}.encode());
    coordinator.send(layout.encode());
}

// The worker's next message other than a heartbeat, if it comes within `limit`.
framing::Frame nextMessage(FrameSocket& coordinator, int* heartbeats = nullptr, std::chrono::milliseconds limit = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        std::optional<framing::Frame> f = coordinator.receive();
        if (!f) {
            ADD_FAILURE() << (coordinator.closed() ? "the worker closed the connection" : "the worker fell silent");
            return framing::Frame{};
        }
        if (f->type != ps::kHeartbeat) return std::move(*f);
        if (heartbeats) ++*heartbeats;
    }
    ADD_FAILURE() << "only heartbeats for " << limit.count() << " ms";
    return framing::Frame{};
}

TEST(PsWorker, StepsPullComputeAndPushExactlyLikeALocalStep) {
    for (int servers : {1, 2}) {
        SCOPED_TRACE(std::to_string(servers) + " parameter servers");
        Job job(servers);
        test::Listener listener;
        WorkerThread worker(listener.port());
        FrameSocket coordinator = listener.accept();
        admit(coordinator, job.layout());
        int heartbeats = 0;
        for (int64_t step = 1; step <= 2; ++step) {
            const ps::Task t = task(step, /*attempt=*/static_cast<uint32_t>(step - 1));
            coordinator.send(t.encode());
            const double expectedLoss = job.expectStep(t);
            const ps::Result r = ps::Result::decode(nextMessage(coordinator, &heartbeats));
            EXPECT_EQ(r.step, step);
            EXPECT_EQ(r.attempt, t.attempt);
            EXPECT_EQ(r.samples, kRows);
            EXPECT_EQ(r.loss, expectedLoss);
            EXPECT_EQ(r.staleness, std::vector<uint64_t>(static_cast<size_t>(servers), 0));
            EXPECT_GE(r.compute_seconds, 0.0);
            for (size_t k = 0; k < job.size(); ++k) job.expectServerValues(k);
        }
        // Heartbeats come while the worker waits for a task too.
        while (heartbeats == 0) {
            const auto f = coordinator.receive();
            ASSERT_TRUE(f) << "no heartbeat";
            EXPECT_EQ(f->type, ps::kHeartbeat);
            ++heartbeats;
        }
        coordinator.send(ps::Shutdown{}.encode());
        const PsWorkerSummary summary = worker.result();
        EXPECT_EQ(summary.steps, 2);
        EXPECT_EQ(summary.samples, 2 * kRows);
        EXPECT_EQ(summary.max_staleness, 0u);
    }
}

TEST(PsWorker, ALostParameterServerIsReportedToTheCoordinatorAndEndsTheWorker) {
    Job job(2);
    test::Listener listener;
    WorkerThread worker(listener.port());
    FrameSocket coordinator = listener.accept();
    admit(coordinator, job.layout());
    coordinator.send(task(1).encode());
    EXPECT_EQ(ps::Result::decode(nextMessage(coordinator)).step, 1);

    const std::string address = job.server(1).address();
    job.server(1).stop();
    coordinator.send(task(2).encode());
    const ps::PsLost lost = ps::PsLost::decode(nextMessage(coordinator));
    EXPECT_EQ(lost.server, 1u);
    EXPECT_EQ(lost.step, 2);
    EXPECT_EQ(lost.message.rfind("parameter server 1 at " + address + ": ", 0), 0u) << lost.message;
    const std::string why = errorOf<ConnectionError>([&] { worker.result(); });
    EXPECT_EQ(why.rfind("worker 0, during step 2: parameter server 1 at " + address + ": ", 0), 0u) << why;
}

TEST(PsWorker, TheCoordinatorLeavingEndsTheWorker) {
    Job job(1);
    test::Listener listener;
    WorkerThread worker(listener.port());
    FrameSocket coordinator = listener.accept();
    admit(coordinator, job.layout());
    coordinator.close();
    const std::string why = errorOf<ConnectionError>([&] { worker.result(); });
    EXPECT_NE(why.find("worker 0, waiting for its next task: the coordinator at 127.0.0.1:" +
                       std::to_string(listener.port()) + ": connection closed by the peer"),
              std::string::npos)
        << why;
}

TEST(PsWorker, AModelThatDoesNotFitTheLayoutIsRefusedWithTheReason) {
    Job job(1);
    ps::JobLayout layout = job.layout();
    layout.shards[0].push_back({layout.param_count, 5});  // the coordinator's model has 5 more parameters
    layout.param_count += 5;
    test::Listener listener;
    WorkerThread worker(listener.port());
    FrameSocket coordinator = listener.accept();
    admit(coordinator, layout);
    const std::string told = ps::ErrorMessage::decode(nextMessage(coordinator)).message;
    const std::string why = errorOf<ModelError>([&] { worker.result(); });
    EXPECT_NE(why.find("worker 0: its model has 51 parameters, the job's layout 56"), std::string::npos) << why;
    EXPECT_EQ(told, "worker 0: " + why);
}

TEST(PsWorker, ALayoutWhoseShardsDoNotCoverTheParametersIsRefused) {
    Job job(2);
    ps::JobLayout layout = job.layout();
    layout.shards[1].push_back(layout.shards[0].front());  // one variable on both servers
    std::sort(layout.shards[1].begin(), layout.shards[1].end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    test::Listener listener;
    WorkerThread worker(listener.port());
    FrameSocket coordinator = listener.accept();
    admit(coordinator, layout);
    const std::string told = ps::ErrorMessage::decode(nextMessage(coordinator)).message;
    EXPECT_NE(told.find("the shards do not cover the 51 parameters once each (overlap at parameter"), std::string::npos)
        << told;
    EXPECT_THROW(worker.result(), ProtocolError);
}

TEST(PsWorker, ATaskWithALabelOutsideTheClassesIsRefused) {
    Job job(1);
    test::Listener listener;
    WorkerThread worker(listener.port());
    FrameSocket coordinator = listener.accept();
    admit(coordinator, job.layout());
    ps::Task bad = task(1);
    bad.y[3] = static_cast<int32_t>(kClasses);
    coordinator.send(bad.encode());
    EXPECT_EQ(ps::ErrorMessage::decode(nextMessage(coordinator)).message,
              "worker 0: Task message for step 1: label 3 of row 3 is outside [0, 3)");
    EXPECT_THROW(worker.result(), ProtocolError);
    EXPECT_EQ(job.server(0).updatesApplied(), 0);
}

// A coordinator that stops (SIGSTOP, a frozen host) sends nothing more, not even heartbeats: the
// worker waiting for its next task gives up after its timeout rather than wait forever.
TEST(PsWorker, ACoordinatorThatFallsSilentEndsTheWorkerAfterTheTimeout) {
    Job job(1);
    test::Listener listener;
    WorkerThread worker(listener.port(), 500ms);
    FrameSocket coordinator = listener.accept();
    admit(coordinator, job.layout());
    coordinator.send(task(1).encode());
    EXPECT_EQ(ps::Result::decode(nextMessage(coordinator)).step, 1);
    const auto silentFrom = std::chrono::steady_clock::now();
    if (!worker.endsWithin(10s)) {
        coordinator.close();  // what ends it on a build that waits forever
        ADD_FAILURE() << "the worker still waits 10 s after its coordinator fell silent (timeout 500 ms)";
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - silentFrom).count();
    const std::string why = errorOf<ConnectionError>([&] { worker.result(); });
    EXPECT_EQ(why, "worker 0, waiting for its next task after step 1: the coordinator at 127.0.0.1:" +
                       std::to_string(listener.port()) + " sent nothing for 0.5 s (stopped, hung or cut off)");
    EXPECT_GE(took, 0.4) << "not before the timeout";
}

// A coordinator with no task for a while says it is alive: the worker keeps waiting past its
// timeout, and takes the task when it comes.
TEST(PsWorker, HeartbeatsFromTheCoordinatorKeepAWaitingWorker) {
    Job job(1);
    test::Listener listener;
    WorkerThread worker(listener.port(), 1s);
    FrameSocket coordinator = listener.accept();
    admit(coordinator, job.layout());
    // Three timeouts of heartbeats and nothing else: what a coordinator sends while it evaluates.
    for (int i = 0; i < 30; ++i) {
        coordinator.send(ps::Heartbeat{}.encode());
        std::this_thread::sleep_for(100ms);
    }
    coordinator.send(task(1).encode());
    EXPECT_EQ(ps::Result::decode(nextMessage(coordinator)).step, 1);
    coordinator.send(ps::Shutdown{}.encode());
    EXPECT_EQ(worker.result().steps, 1);
}

// A parameter server that stops reading (SIGSTOP) while a worker pushes a gradient larger than the
// sockets' buffers: the push makes no progress, and the worker, whose heartbeats would otherwise
// tell the coordinator all is well, fails within its timeout and reports the server with PsLost.
TEST(PsWorker, APushTheServerStopsReadingFailsTheWorkerWithinTheTimeout) {
    constexpr int kHidden = 500'000;  // 4 M parameters: a 16 MB push, four times the send buffer's most
    const ModelSpec model = test::denseModel(kHidden, static_cast<int>(kClasses));
    const int64_t params = 5 * int64_t{kHidden} + (kHidden + 1) * kClasses;
    test::Listener server(4096);  // the stopped server's receive buffer fills at once
    test::Listener listener;
    ps::JobLayout layout;
    layout.channels = kShape[0], layout.height = kShape[1], layout.width = kShape[2], layout.classes = kClasses;
    layout.param_count = params;
    layout.heartbeat_ms = 10;
    layout.servers = {"127.0.0.1:" + std::to_string(server.port())};
    layout.shards = {{{0, params}}};
    WorkerThread worker(listener.port(), 1s, model);
    FrameSocket coordinator = listener.accept();
    admit(coordinator, layout);
    FrameSocket ps0 = server.accept();
    const auto hello = ps0.receive();
    ASSERT_TRUE(hello);
    EXPECT_EQ(ps::Hello::decode(*hello).role, ps::Role::Worker);
    ps0.send(ps::Welcome{ps::Role::ParameterServer, 0}.encode());
    coordinator.send(task(1).encode());
    const auto pull = ps0.receive();
    ASSERT_TRUE(pull);
    EXPECT_EQ(pull->type, ps::kPull);
    const std::vector<float> values(static_cast<size_t>(params), 0.5f);
    ps0.send(ps::Params::encode(0, values.data(), values.size()));
    // Now the server stops: it reads no more. The worker computes and pushes.
    const auto stoppedAt = std::chrono::steady_clock::now();
    const framing::Frame report = nextMessage(coordinator, nullptr, 10s);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stoppedAt).count();
    ps0.close();  // what ends the worker on a build whose push waits forever
    ASSERT_EQ(report.type, ps::kPsLost) << "no PsLost within 10 s of the server's stop (timeout 1 s)";
    const ps::PsLost lost = ps::PsLost::decode(report);
    EXPECT_EQ(lost.server, 0u);
    EXPECT_EQ(lost.step, 1);
    EXPECT_NE(lost.message.find("parameter server 0 at 127.0.0.1:" + std::to_string(server.port()) +
                                ": took no bytes for 1000 ms ("),
              std::string::npos)
        << lost.message;
    EXPECT_NE(lost.message.find("bytes of a Push message sent): it has stopped reading"), std::string::npos)
        << lost.message;
    EXPECT_LT(took, 6.0) << "the timeout is 1 s";
    EXPECT_THROW(worker.result(), ParameterServerLost);
}

}  // namespace
}  // namespace trainbench::engine
