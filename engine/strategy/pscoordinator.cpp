#include "engine/strategy/pscoordinator.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "engine/net/asioserver.h"
#include "engine/strategy/workersession.h"
#include "engine/util/durationtext.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kHelloTimeout{10'000};

// A step on its way through the workers: the batch is kept until the step is done, so that it can
// be handed to another worker if its own is lost.
struct PendingTask {
    int64_t step = 0;
    uint64_t seed = 0;
    int64_t rows = 0;
    std::vector<float> x;
    std::vector<int32_t> y;
    uint32_t attempt = 0;
    uint64_t session = 0;  // the worker's session while it runs the step; 0 while queued
};

}  // namespace

struct PsCoordinator::Impl final : WorkerSessionOwner {
    using Session = WorkerSession;

    PsCoordinatorConfig config;
    ps::JobLayout layout;
    int64_t exampleSize = 1;
    const std::shared_ptr<const std::string> heartbeatFrame =
        std::make_shared<const std::string>(ps::Heartbeat{}.encode());
    std::shared_ptr<const std::string> layoutFrame;
    // Its pending handlers hold sessions; stopping it drops the ones kept below first (onHalted).
    std::optional<AsioServer> server;

    // Shared between the io thread and the training thread.
    std::mutex mutex;
    std::condition_variable changed;
    std::map<uint64_t, std::shared_ptr<Session>> sessions;  // workers that said Hello
    std::deque<uint64_t> idle;                               // of those, the ones without a step
    std::map<int64_t, PendingTask> tasks;                    // dispatched, not finished
    std::deque<int64_t> queue;                               // of those, the ones waiting for a worker
    std::vector<StrategyStep> results;
    std::optional<std::string> fatal;
    ParameterServerStats stats;
    Clock::time_point lastWorkerSeen = Clock::now();
    std::set<int> everJoined;  // worker indices that have joined at least once
    std::vector<std::string> losses;  // why workers were lost, for the error when none is left
    uint64_t nextSession = 1;         // io thread only
    std::vector<std::shared_ptr<Session>> shutdownSent;  // by shutdownWorkers(), training thread only

    void log(const std::string& m) const {
        if (config.log) config.log(m);
    }
    std::string serverName(size_t k) const {
        return "parameter server " + std::to_string(k) + " at " + layout.servers[k];
    }

    // ---- io thread -------------------------------------------------------------------------
    void refused(const std::string& what) override {
        server->countRejected();
        log("coordinator: " + what);
    }

    void silent(Session& s) override {
        {
            std::lock_guard lock(mutex);
            if (!sessions.count(s.id())) return;  // never joined, or no loss any more (shut down)
        }
        s.close();
        lost(s, "it sent nothing for " + secondsText(config.timeout) + " (stopped, hung or cut off)");
    }

    // Every watch period: sends a Heartbeat to the workers that heard nothing for heartbeat_ms (so
    // that a worker waiting for its next task can tell a coordinator that stopped from one that
    // has no task for it yet).
    bool watch() {
        const auto now = Clock::now();
        std::vector<std::shared_ptr<Session>> idleSessions;
        {
            std::lock_guard lock(mutex);
            for (auto& [id, s] : sessions)
                if (!s->writing() && now - s->lastWritten() >= std::chrono::milliseconds(layout.heartbeat_ms))
                    idleSessions.push_back(s);
        }
        for (auto& s : idleSessions) s->write(heartbeatFrame);
        return true;
    }

    // Hands queued steps to idle workers. With the mutex held.
    void pump() {
        while (!queue.empty() && !idle.empty()) {
            const uint64_t id = idle.front();
            idle.pop_front();
            auto it = sessions.find(id);
            if (it == sessions.end() || it->second->closed()) continue;
            const int64_t step = queue.front();
            queue.pop_front();
            PendingTask& t = tasks.at(step);
            t.session = id;
            it->second->step = step;
            auto frame = std::make_shared<const std::string>(
                ps::Task::encode(t.step, t.attempt, t.seed, t.rows, t.x.data(), exampleSize, t.y.data()));
            asio::post(server->io(), [s = it->second, frame] { s->write(frame); });
        }
    }

    void joined(const std::shared_ptr<Session>& s) override {
        std::lock_guard lock(mutex);
        sessions[s->id()] = s;
        idle.push_back(s->id());
        ++stats.joined_workers;
        everJoined.insert(s->worker());
        lastWorkerSeen = Clock::now();
        log("coordinator: worker " + std::to_string(s->worker()) + " joined from " + s->peer());
        pump();
        changed.notify_all();
    }

    // A worker is gone: its step, if it had one, goes back to the front of the queue.
    void lost(Session& s, const std::string& why) override {
        std::lock_guard lock(mutex);
        if (!sessions.erase(s.id())) return;  // never joined, or already counted
        std::erase(idle, s.id());
        ++stats.lost_workers;
        std::string what = "worker " + std::to_string(s.worker()) + " (" + s.peer() + ") lost: " + why;
        if (s.step) {
            PendingTask& t = tasks.at(*s.step);
            t.session = 0;
            ++t.attempt;
            queue.push_front(t.step);
            ++stats.rescheduled_steps;
            what += "; step " + std::to_string(t.step) + " goes to another worker (attempt " + std::to_string(t.attempt + 1) + ")";
            s.step.reset();
        }
        losses.push_back(what);
        if (!sessions.empty()) lastWorkerSeen = Clock::now();
        log("coordinator: " + what);
        pump();
        changed.notify_all();
    }

    // A worker said it cannot go on (a model that does not match, ...): the others would fail the same way.
    void workerFailed(Session& s, const std::string& why) override {
        {
            std::lock_guard lock(mutex);
            if (!fatal) fatal = "worker " + std::to_string(s.worker()) + " (" + s.peer() + ") failed: " + why;
        }
        lost(s, "it failed: " + why);
    }

    void serverLost(Session& s, const ps::PsLost& m) override {
        std::lock_guard lock(mutex);
        const std::string name = m.server < layout.servers.size() ? serverName(m.server)
                                                                   : "parameter server " + std::to_string(m.server);
        if (!fatal)
            fatal = name + " is lost (reported by worker " + std::to_string(s.worker()) + " at step " +
                    std::to_string(m.step) + "): " + m.message;
        changed.notify_all();
    }

    void result(Session& s, const ps::Result& r) override {
        std::lock_guard lock(mutex);
        auto it = tasks.find(r.step);
        // A result for a step that was already given up on this worker (or finished) is dropped.
        if (it == tasks.end() || it->second.session != s.id() || it->second.attempt != r.attempt)
            throw ProtocolError("Result for step " + std::to_string(r.step) + " (attempt " + std::to_string(r.attempt) +
                                "), which this worker was not running");
        StrategyStep out;
        out.step = r.step;
        out.loss = r.loss;
        out.comm_seconds = r.pull_seconds + r.push_seconds;
        ReplicaStep rec;
        rec.rank = s.worker();
        rec.samples = r.samples;
        rec.compute_seconds = r.compute_seconds;
        rec.comm_seconds = out.comm_seconds;
        out.replicas.push_back(rec);
        for (size_t k = 0; k < r.staleness.size(); ++k) {
            out.updates.push_back({static_cast<int>(k), s.worker(), static_cast<int>(r.attempt),
                                   static_cast<int64_t>(r.staleness[k])});
            stats.staleness.push_back(static_cast<int64_t>(r.staleness[k]));
        }
        results.push_back(std::move(out));
        tasks.erase(it);
        s.step.reset();
        idle.push_back(s.id());
        pump();
        changed.notify_all();
    }

    // ---- training thread -------------------------------------------------------------------
    // Waits (with the lock held) until `done` or a failure; throws if the job cannot go on.
    template <class Done>
    void waitFor(std::unique_lock<std::mutex>& lock, Done done, const std::string& what) {
        while (true) {
            if (fatal) throw ConnectionError(*fatal);
            if (done()) return;
            if (sessions.empty() && Clock::now() - lastWorkerSeen > config.timeout) {
                std::string why = "no worker is connected to the coordinator at " + config.listen.text() + " (waited " +
                                  secondsText(config.timeout) + " " + what + ")";
                for (const std::string& l : losses) why += "; " + l;
                throw ConnectionError(why);
            }
            changed.wait_for(lock, std::chrono::milliseconds(100));
        }
    }
    void awaitWorkers() {
        std::unique_lock lock(mutex);
        const auto ready = [&] { return fatal || static_cast<int>(everJoined.size()) >= config.workers; };
        if (changed.wait_until(lock, Clock::now() + config.timeout, ready)) return;
        std::string missing;
        for (int w = 0; w < config.workers; ++w)
            if (!everJoined.count(w)) missing += (missing.empty() ? "" : ", ") + std::to_string(w);
        log("coordinator: worker(s) " + missing + " had not joined after " + secondsText(config.timeout) +
            "; starting with the " + std::to_string(everJoined.size()) + " that have");
    }
};


PsCoordinator::PsCoordinator(PsCoordinatorConfig config, ps::JobLayout layout, int64_t exampleSize)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.config = std::move(config);
    m.layout = std::move(layout);
    m.layoutFrame = std::make_shared<const std::string>(m.layout.encode());
    m.exampleSize = exampleSize;
    m.server.emplace(m.config.token, kHelloTimeout, [&m](const std::string& line) { m.log("coordinator: " + line); });
    if (const std::string why = m.server->listen(m.config.listen.host, static_cast<uint16_t>(m.config.listen.port));
        !why.empty())
        throw ConnectionError("coordinator: cannot listen on " + m.config.listen.text() + ": " + why);
    m.server->every(std::clamp(std::chrono::milliseconds(m.layout.heartbeat_ms / 2), std::chrono::milliseconds(10),
                               std::chrono::milliseconds(200)),
                    [&m] { return m.watch(); });
    AsioServer::Hooks hooks;
    hooks.onFailure = [&m](const std::string& what) {  // a handler threw past its session (out of memory)
        std::lock_guard lock(m.mutex);
        if (!m.fatal) m.fatal = "coordinator: stopped: " + what;
        m.changed.notify_all();
    };
    hooks.onHalted = [&m] {  // the sessions go before the io_context their sockets are on
        std::lock_guard lock(m.mutex);
        m.sessions.clear();
        m.shutdownSent.clear();
    };
    m.server->start(
        [&m](tcp::socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<WorkerSession>(*m.server, std::move(socket), std::move(ticket), m, m.nextSession++,
                                            m.layoutFrame, m.config.timeout)
                ->start();
        },
        std::move(hooks));
}

PsCoordinator::~PsCoordinator() { impl_->server->stop(); }

uint16_t PsCoordinator::port() const { return impl_->server->port(); }

void PsCoordinator::awaitWorkers() { impl_->awaitWorkers(); }

void PsCoordinator::dispatch(const BatchView& batch, int64_t step, uint64_t stepSeed) {
    Impl& m = *impl_;
    PendingTask t;
    t.step = step;
    t.seed = stepSeed;
    t.rows = batch.count;
    t.x.assign(batch.x, batch.x + batch.count * m.exampleSize);
    t.y.assign(batch.y, batch.y + batch.count);
    std::unique_lock lock(m.mutex);
    if (m.fatal) throw ConnectionError(*m.fatal);
    m.tasks.emplace(step, std::move(t));
    m.queue.push_back(step);
    m.pump();
    // Every step is with a worker before the next batch is read: at most one step per worker.
    m.waitFor(lock, [&] { return m.queue.empty(); }, "to hand step " + std::to_string(step) + " to a worker");
}

std::vector<StrategyStep> PsCoordinator::completed(bool all) {
    Impl& m = *impl_;
    std::unique_lock lock(m.mutex);
    if (all) m.waitFor(lock, [&] { return m.tasks.empty(); }, "for the steps in flight");
    else if (m.fatal) throw ConnectionError(*m.fatal);
    std::vector<StrategyStep> out;
    out.swap(m.results);
    return out;
}

void PsCoordinator::shutdownWorkers() {
    Impl& m = *impl_;
    auto shutdown = std::make_shared<const std::string>(ps::Shutdown{}.encode());
    {
        std::lock_guard lock(m.mutex);
        for (auto& [id, s] : m.sessions) m.shutdownSent.push_back(s);
        m.sessions.clear();  // what happens to their connections now is no loss
        m.idle.clear();
    }
    for (auto& s : m.shutdownSent) asio::post(m.server->io(), [s, shutdown] { s->endWith(shutdown); });
}

void PsCoordinator::awaitShutdownsSent(std::chrono::milliseconds limit) {
    Impl& m = *impl_;
    const auto deadline = Clock::now() + limit;
    for (auto& s : m.shutdownSent) {
        while (Clock::now() < deadline) {
            // Shared with the handler: should the io thread be gone, the wait ends at the deadline.
            auto busy = std::make_shared<std::promise<bool>>();
            std::future<bool> writing = busy->get_future();
            asio::post(m.server->io(), [busy, s] { busy->set_value(s->writing()); });
            if (writing.wait_until(deadline) != std::future_status::ready || !writing.get()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    m.shutdownSent.clear();
}

ParameterServerStats PsCoordinator::stats() const {
    std::lock_guard lock(impl_->mutex);
    ParameterServerStats s = impl_->stats;
    s.rejected_connections = impl_->server->rejectedConnections();
    s.pending_connections = impl_->server->pendingConnections();
    return s;
}

}  // namespace trainbench::engine
