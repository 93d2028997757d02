#include "engine/strategy/psworker.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "engine/device/cpudevice.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/net/hostport.h"
#include "engine/strategy/clusterspec.h"
#include "engine/strategy/framedclient.h"
#include "engine/strategy/heartbeatsender.h"
#include "engine/strategy/psprotocol.h"
#include "engine/strategy/shardconnections.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "engine/util/durationtext.h"
#include "engine/util/errors.h"
#include "engine/util/elapsed.h"

namespace trainbench::engine {

namespace {

using Clock = std::chrono::steady_clock;
using Log = std::function<void(const std::string&)>;

constexpr int64_t kMaxHeartbeatMs = 3'600'000;

// The servers' addresses of a JobLayout.
std::vector<HostPort> serverAddresses(const ps::JobLayout& layout) {
    std::vector<HostPort> out;
    for (size_t k = 0; k < layout.servers.size(); ++k) {
        try {
            const net::HostPort hp = net::parseHostPort(layout.servers[k]);
            out.push_back({hp.host, hp.port});
        } catch (const RendezvousError&) {
            throw ProtocolError("JobLayout message: parameter server " + std::to_string(k) + " has the address '" +
                                layout.servers[k] + "', not host:port");
        }
    }
    return out;
}

// Every parameter is on exactly one server: otherwise some would never be trained, others twice.
void checkShardsCoverParameters(const ps::JobLayout& layout) {
    std::vector<ps::Span> all;
    for (const auto& shard : layout.shards) all.insert(all.end(), shard.begin(), shard.end());
    std::sort(all.begin(), all.end(), [](const ps::Span& a, const ps::Span& b) { return a.offset < b.offset; });
    int64_t end = 0;
    for (const ps::Span& s : all) {
        if (s.offset != end)
            throw ProtocolError("JobLayout message: the shards do not cover the " + std::to_string(layout.param_count) +
                                " parameters once each (" + (s.offset < end ? "overlap" : "gap") + " at parameter " +
                                std::to_string(std::min(s.offset, end)) + ")");
        end += s.count;
    }
    if (end != layout.param_count)
        throw ProtocolError("JobLayout message: the shards cover " + std::to_string(end) + " parameters of " +
                            std::to_string(layout.param_count));
}

// One worker's part in the job, from its Hello to the coordinator's Shutdown.
class PsWorker {
public:
    PsWorker(const PsWorkerConfig& config, FramedClient& coordinator, const Log& log)
        : config_(config), coordinator_(coordinator), log_(log), name_("worker " + std::to_string(config.index)) {}

    PsWorkerSummary run() {
        const ps::JobLayout layout = join();
        HeartbeatSender heartbeat({&coordinator_}, std::chrono::milliseconds(layout.heartbeat_ms));
        buildModel(layout);
        const std::vector<HostPort> addresses = serverAddresses(layout);
        try {
            servers_ = std::make_unique<ShardConnections>(addresses, layout.shards, config_.token, config_.index,
                                                          config_.connectTimeout, config_.timeout);
        } catch (const ParameterServerLost& e) {
            lost(e, 0, "while connecting");
        }
        say(name_ + ": joined the job: " + std::to_string(model_->paramCount()) + " parameters on " +
            std::to_string(servers_->size()) + " parameter servers");
        while (true) {
            framing::Frame f = nextMessage();
            if (f.type == ps::kHeartbeat) {
                ps::Heartbeat::decode(f);  // the coordinator is alive, it has no task for this worker yet
                continue;
            }
            if (f.type == ps::kShutdown) {
                ps::Shutdown::decode(f);
                say(name_ + ": the coordinator ended the job after " + std::to_string(summary_.steps) + " steps here");
                return summary_;
            }
            if (f.type != ps::kTask)
                throw ProtocolError("unexpected " + ps::messageName(f.type) +
                                    " message from the coordinator (a worker takes Task, Heartbeat and Shutdown)");
            ps::Task task = ps::Task::decode(f);
            step(task);
        }
    }

private:
    // Hello, Welcome, JobLayout.
    ps::JobLayout join() {
        coordinator_.send(ps::Hello{config_.token, ps::Role::Worker, config_.index}.encode());
        const ps::Welcome welcome = ps::Welcome::decode(coordinator_.receive(config_.timeout));
        if (welcome.role != ps::Role::Coordinator)
            throw ProtocolError(coordinator_.peer() + " answered Hello as the " + ps::roleName(welcome.role) +
                                " (is the coordinator's address right?)");
        ps::JobLayout layout = ps::JobLayout::decode(coordinator_.receive(config_.timeout));
        if (layout.heartbeat_ms < 1 || layout.heartbeat_ms > kMaxHeartbeatMs)
            throw ProtocolError("JobLayout message: a heartbeat every " + std::to_string(layout.heartbeat_ms) +
                                " ms (1 to " + std::to_string(kMaxHeartbeatMs) + " expected)");
        if (layout.channels < 1 || layout.height < 1 || layout.width < 1 || layout.classes < 1)
            throw ProtocolError("JobLayout message: examples of " + std::to_string(layout.channels) + "x" +
                                std::to_string(layout.height) + "x" + std::to_string(layout.width) + " in " +
                                std::to_string(layout.classes) + " classes");
        checkShardsCoverParameters(layout);
        return layout;
    }

    void buildModel(const ps::JobLayout& layout) {
        device_ = std::make_unique<CpuDevice>(config_.threads);
        model_ = std::make_unique<Model>(config_.model, Dims{layout.channels, layout.height, layout.width},
                                         layout.classes, *device_, config_.seed);
        if (model_->paramCount() != layout.param_count)
            throw ModelError(name_ + ": its model has " + std::to_string(model_->paramCount()) +
                             " parameters, the job's layout " + std::to_string(layout.param_count) +
                             " (do the coordinator and the workers read the same model spec and data?)");
        exampleSize_ = layout.channels * layout.height * layout.width;
    }

    // The coordinator's next message. Tasks come as the chief's input pipeline and the other
    // workers allow; meanwhile the coordinator sends heartbeats, so silence for the timeout means
    // it stopped, hung or was cut off.
    framing::Frame nextMessage() {
        const std::string waiting = name_ + ", waiting for its next task" +
                                    (summary_.steps ? " after step " + std::to_string(lastStep_) : std::string()) + ": ";
        std::optional<framing::Frame> f;
        try {
            f = coordinator_.tryReceive(config_.timeout);
        } catch (const ConnectionError& e) {
            throw ConnectionError(waiting + e.what());
        }
        if (!f)
            throw ConnectionError(waiting + coordinator_.peer() + " sent nothing for " + secondsText(config_.timeout) +
                                  " (stopped, hung or cut off)");
        return std::move(*f);
    }

    void checkTask(const ps::Task& task) const {
        const std::string what = "Task message for step " + std::to_string(task.step) + ": ";
        if (task.rows < 1) throw ProtocolError(what + "no rows");
        if (static_cast<int64_t>(task.x.size()) != task.rows * exampleSize_)
            throw ProtocolError(what + std::to_string(task.x.size()) + " example values for " + std::to_string(task.rows) +
                                " rows of " + std::to_string(exampleSize_));
        for (size_t i = 0; i < task.y.size(); ++i)
            if (task.y[i] < 0 || task.y[i] >= model_->numClasses())
                throw ProtocolError(what + "label " + std::to_string(task.y[i]) + " of row " + std::to_string(i) +
                                    " is outside [0, " + std::to_string(model_->numClasses()) + ")");
    }

    void step(ps::Task& task) {
        checkTask(task);
        if (!threadsBound_) device_->bindThreads();  // the thread that runs the device's primitives
        threadsBound_ = true;
        ps::Result result;
        result.step = task.step;
        result.attempt = task.attempt;
        result.samples = task.rows;
        try {
            auto t = Clock::now();
            servers_->pull(task.step, model_->params());
            result.pull_seconds = secondsSince(t);

            t = Clock::now();
            result.loss = computeGradient(task);
            result.compute_seconds = secondsSince(t);

            t = Clock::now();
            result.staleness = servers_->push(task.step, model_->grads());
            result.push_seconds = secondsSince(t);
        } catch (const ParameterServerLost& e) {
            lost(e, task.step, "during step " + std::to_string(task.step));
        }
        coordinator_.send(result.encode());

        lastStep_ = task.step;
        ++summary_.steps;
        summary_.samples += task.rows;
        summary_.compute_seconds += result.compute_seconds;
        summary_.pull_seconds += result.pull_seconds;
        summary_.push_seconds += result.push_seconds;
        for (uint64_t s : result.staleness) summary_.max_staleness = std::max(summary_.max_staleness, s);
    }

    // Forward, loss, backward: the gradient of the batch's mean loss, in model.grads().
    double computeGradient(ps::Task& task) {
        Model& model = *model_;
        Tensor& logits = model.forward(task.x.data(), task.rows, /*training=*/true, task.seed);
        if (gradLogits_.empty() || gradLogits_.dims()[0] != task.rows)
            gradLogits_ = Tensor(Tensor::plainDesc({task.rows, model.numClasses()}), device_->engine());
        device_->stream().wait();
        const double loss = SoftmaxCrossEntropy::compute(logits, task.y.data(), &gradLogits_, task.rows).loss;
        model.backward(gradLogits_);
        device_->stream().wait();
        return loss;
    }

    // Tells the coordinator (it reschedules the step elsewhere or stops the job), then gives up.
    [[noreturn]] void lost(const ParameterServerLost& e, int64_t step, const std::string& when) {
        const std::string what = e.what();
        try {
            coordinator_.send(ps::PsLost{e.server, step, what}.encode());
        } catch (const ConnectionError&) {
            // The coordinator is gone too: the error below says what failed first.
        }
        throw ParameterServerLost(e.server, e.address, name_ + ", " + when + ": " + what);
    }

    void say(const std::string& line) const {
        if (log_) log_(line);
    }

    const PsWorkerConfig& config_;
    FramedClient& coordinator_;
    const Log& log_;
    std::string name_;  // "worker 3"
    std::unique_ptr<CpuDevice> device_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<ShardConnections> servers_;
    Tensor gradLogits_;
    int64_t exampleSize_ = 1;
    bool threadsBound_ = false;
    int64_t lastStep_ = 0;  // the last step this worker ran
    PsWorkerSummary summary_;
};

}  // namespace

PsWorkerSummary runParameterServerWorker(const PsWorkerConfig& config, const Log& log) {
    FramedClient coordinator(config.coordinatorHost, config.coordinatorPort,
                             "the coordinator at " + net::formatHostPort(config.coordinatorHost,
                                                                                static_cast<uint16_t>(config.coordinatorPort)),
                             config.connectTimeout, config.timeout);
    try {
        return PsWorker(config, coordinator, log).run();
    } catch (const ConnectionError&) {
        throw;  // the coordinator is gone, or was told with PsLost
    } catch (const std::exception& e) {
        // A malformed message, a model that does not fit the job: say why before closing.
        try {
            coordinator.send(ps::ErrorMessage{std::string("worker ") + std::to_string(config.index) + ": " + e.what()}.encode());
        } catch (const ConnectionError&) {
        }
        throw;
    }
}

}  // namespace trainbench::engine
