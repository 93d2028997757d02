#include "engine/strategy/parameterserverstrategy.h"

#include <algorithm>
#include <stdexcept>

#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/strategy/framedclient.h"
#include "engine/strategy/heartbeatsender.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

struct ParameterServerStrategy::Impl {
    ParameterServerStrategyConfig config;
    std::unique_ptr<CpuDevice> device;
    std::unique_ptr<Model> model;
    std::unique_ptr<Optimizer> optimizer;
    int64_t exampleSize = 1;
    ps::JobLayout layout;
    std::vector<std::unique_ptr<FramedClient>> servers;
    std::unique_ptr<HeartbeatSender> serverHeartbeats;  // to `servers`, from the first step on
    std::unique_ptr<PsCoordinator> coordinator;         // serves the workers; stopped first
    bool started = false;
    bool restored = false;
    bool finished = false;

    void log(const std::string& m) const {
        if (config.log) config.log(m);
    }
    std::string serverName(size_t k) const {
        return "parameter server " + std::to_string(k) + " at " + config.servers[k].text();
    }

    framing::Frame expect(FramedClient& c, uint16_t type, const std::string& what) {
        framing::Frame f = c.receive(config.timeout);
        if (f.type != type)
            throw ProtocolError(c.peer() + ": expected " + ps::messageName(type) + " in reply to " + what + ", got " +
                                ps::messageName(f.type));
        return f;
    }

    // Connects to every parameter server and gives each its shard, from this model and optimizer.
    void start(int64_t firstStep) {
        std::vector<OptimizerStateSpan> state = optimizer->state();
        for (size_t k = 0; k < config.servers.size(); ++k) {
            const HostPort& hp = config.servers[k];
            auto c = std::make_unique<FramedClient>(hp.host, hp.port, serverName(k), config.timeout, config.timeout);
            c->send(ps::Hello{config.token, ps::Role::Coordinator, 0}.encode());
            const ps::Welcome w = ps::Welcome::decode(expect(*c, ps::kWelcome, "Hello"));
            if (w.role != ps::Role::ParameterServer || w.index != k)
                throw ConnectionError(serverName(k) + ": answered as " + ps::roleName(w.role) + " " +
                                      std::to_string(w.index) + " (is the cluster spec the same for every task?)");
            ps::Init init;
            init.server = static_cast<uint32_t>(k);
            // A carried optimizer state counts its updates from before this run (Optimizer::stepsBefore).
            init.base_step = optimizer->stepsBefore() + firstStep - 1;
            init.spans = layout.shards[k];
            const int64_t n = ps::shardSize(init.spans);
            init.values.resize(static_cast<size_t>(n));
            ps::gather(model->params(), init.spans, init.values.data());
            if (restored)
                for (const OptimizerStateSpan& s : state) {
                    ps::StateBlock b{s.name, std::vector<float>(static_cast<size_t>(n))};
                    ps::gather(s.values.data(), init.spans, b.values.data());
                    init.state.push_back(std::move(b));
                }
            c->send(init.encode());
            ps::InitDone::decode(expect(*c, ps::kInitDone, "Init"));
            servers.push_back(std::move(c));
        }
        // The servers hear from the coordinator between its requests too: one that falls silent is gone.
        std::vector<FramedClient*> peers;
        for (auto& c : servers) peers.push_back(c.get());
        serverHeartbeats = std::make_unique<HeartbeatSender>(std::move(peers), std::chrono::milliseconds(layout.heartbeat_ms));
        started = true;
        log("coordinator: " + std::to_string(servers.size()) + " parameter server(s) hold the variables; first step " +
            std::to_string(firstStep));
        coordinator->awaitWorkers();
    }
};

ParameterServerStrategy::ParameterServerStrategy(ParameterServerStrategyConfig config, int threads,
                                                 const ModelSpec& spec, const Dims& sampleShape, int64_t numClasses,
                                                 const OptimizerConfig& optimizer, uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.config = std::move(config);
    if (m.config.servers.empty()) throw std::invalid_argument("parameter_server: the cluster spec has no ps tasks");
    m.device = std::make_unique<CpuDevice>(threads);
    m.model = std::make_unique<Model>(spec, sampleShape, numClasses, *m.device, seed);
    m.optimizer = Optimizer::create(optimizer, m.model->paramCount());
    for (int64_t d : sampleShape) m.exampleSize *= d;

    std::vector<ps::Span> variables;
    for (const auto& [offset, count] : m.model->gradientSpans()) variables.push_back({offset, count});
    m.layout.channels = sampleShape.size() > 0 ? sampleShape[0] : 1;
    m.layout.height = sampleShape.size() > 1 ? sampleShape[1] : 1;
    m.layout.width = sampleShape.size() > 2 ? sampleShape[2] : 1;
    m.layout.classes = numClasses;
    m.layout.param_count = m.model->paramCount();
    m.layout.heartbeat_ms = std::clamp<int64_t>(m.config.timeout.count() / 4, 50, 1000);
    for (const HostPort& hp : m.config.servers) m.layout.servers.push_back(hp.text());
    m.layout.shards = ps::shardVariables(variables, static_cast<int>(m.config.servers.size()));

    m.coordinator = std::make_unique<PsCoordinator>(
        PsCoordinatorConfig{m.config.listen, m.config.token, m.config.workers, m.config.timeout, m.config.log}, m.layout,
        m.exampleSize);
}

ParameterServerStrategy::~ParameterServerStrategy() = default;

int ParameterServerStrategy::replicas() const { return impl_->config.workers; }

std::string ParameterServerStrategy::devices() const {
    return "cpu:" + std::to_string(impl_->config.threadsPerWorker) + "x" + std::to_string(impl_->config.workers);
}

Model& ParameterServerStrategy::model() { return *impl_->model; }
Optimizer& ParameterServerStrategy::optimizer() { return *impl_->optimizer; }
void ParameterServerStrategy::bindThreads() { impl_->device->bindThreads(); }

void ParameterServerStrategy::restore(const Checkpoint& checkpoint) {
    Strategy::restore(checkpoint);
    impl_->restored = true;
}

void ParameterServerStrategy::warmStart(const Checkpoint& checkpoint, const WarmStartOptions& options) {
    Strategy::warmStart(checkpoint, options);
    impl_->restored = options.carry_optimizer;
}

uint16_t ParameterServerStrategy::port() const { return impl_->coordinator->port(); }

StrategyStep ParameterServerStrategy::step(const BatchView&, int64_t, uint64_t, const std::function<void()>&) {
    throw std::logic_error("parameter_server is asynchronous: the trainer calls dispatch() and completed()");
}

void ParameterServerStrategy::dispatch(const BatchView& batch, int64_t step, uint64_t stepSeed) {
    Impl& m = *impl_;
    if (!m.started) m.start(step);
    m.coordinator->dispatch(batch, step, stepSeed);
}

std::vector<StrategyStep> ParameterServerStrategy::completed(bool all) { return impl_->coordinator->completed(all); }

void ParameterServerStrategy::fetchState(bool optimizerToo) {
    Impl& m = *impl_;
    if (!m.started) return;  // nothing trained yet: the model holds what the servers would
    std::vector<OptimizerStateSpan> state = optimizerToo ? m.optimizer->state() : std::vector<OptimizerStateSpan>{};
    for (size_t k = 0; k < m.servers.size(); ++k) {
        FramedClient& c = *m.servers[k];
        const std::vector<ps::Span>& shard = m.layout.shards[k];
        const int64_t n = ps::shardSize(shard);
        try {
            if (!optimizerToo) {
                c.send(ps::Pull{0}.encode());
                const ps::Params p = ps::Params::decode(m.expect(c, ps::kParams, "Pull"));
                if (static_cast<int64_t>(p.values.size()) != n)
                    throw ProtocolError(c.peer() + ": sent " + std::to_string(p.values.size()) + " values for a shard of " +
                                        std::to_string(n));
                ps::scatter(p.values.data(), shard, m.model->params());
                continue;
            }
            c.send(ps::GetState{}.encode());
            const ps::State st = ps::State::decode(m.expect(c, ps::kState, "GetState"));
            if (static_cast<int64_t>(st.values.size()) != n)
                throw ProtocolError(c.peer() + ": sent " + std::to_string(st.values.size()) + " values for a shard of " +
                                    std::to_string(n));
            ps::scatter(st.values.data(), shard, m.model->params());
            for (const OptimizerStateSpan& s : state) {
                auto it = std::find_if(st.state.begin(), st.state.end(), [&](const ps::StateBlock& b) { return b.name == s.name; });
                if (it == st.state.end()) throw ProtocolError(c.peer() + ": its optimizer state has no '" + s.name + "'");
                ps::scatter(it->values.data(), shard, s.values.data());
            }
        } catch (const ConnectionError& e) {
            throw ConnectionError(std::string("parameter server lost: ") + e.what());
        }
    }
}

void ParameterServerStrategy::finish() {
    Impl& m = *impl_;
    if (m.finished) return;
    m.finished = true;
    // Workers first (they stop pulling), then the servers.
    m.coordinator->shutdownWorkers();
    m.serverHeartbeats.reset();
    const std::string shutdown = ps::Shutdown{}.encode();
    for (auto& c : m.servers) {
        try {
            c->send(shutdown);
        } catch (const ConnectionError& e) {
            m.log(std::string("coordinator: ") + e.what());
        }
    }
    // Let the Shutdowns go out before the connections close with this process.
    m.coordinator->awaitShutdownsSent(std::chrono::seconds(2));
}

ParameterServerStats ParameterServerStrategy::stats() const { return impl_->coordinator->stats(); }

}  // namespace trainbench::engine
