#include "engine/strategy/pscoordinator.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility> (fixed in 1.75).
#include <utility>

#include <boost/asio.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "engine/net/asiolisten.h"
#include "engine/util/durationtext.h"
#include "engine/util/errors.h"
#include "engine/util/sametoken.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kHelloTimeout{10'000};
// Workers' Task and Result messages carry a batch; anything larger than this is not one of ours.
constexpr uint64_t kMaxWorkerPayload = 64ull << 20;
// Until a peer has said Hello with the token, it gets no big buffers: reads go into a small one.
constexpr size_t kReadBytes = 64 * 1024;
constexpr size_t kHelloReadBytes = 256;

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

struct PsCoordinator::Impl {
    class Session;

    PsCoordinatorConfig config;
    ps::JobLayout layout;
    int64_t exampleSize = 1;

    // Outlives `io`, whose pending handlers hold sessions and their places in it.
    PendingLimit pending{[this](const std::string& line) { log("coordinator: " + line); }};
    std::atomic<int64_t> rejected{0};  // connections refused before their Hello was accepted
    const std::shared_ptr<const std::string> heartbeatFrame =
        std::make_shared<const std::string>(ps::Heartbeat{}.encode());

    asio::io_context io{1};
    tcp::acceptor acceptor{io};
    asio::steady_timer watchdog{io};
    asio::steady_timer acceptRetry{io};
    std::thread thread;

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
    uint64_t nextSession = 1;
    std::vector<std::shared_ptr<Session>> shutdownSent;  // by shutdownWorkers(), training thread only

    void log(const std::string& m) const {
        if (config.log) config.log(m);
    }
    std::string serverName(size_t k) const { return "parameter server " + std::to_string(k) + " at " + layout.servers[k]; }

    // ---- io thread -------------------------------------------------------------------------
    class Session : public std::enable_shared_from_this<Session> {
    public:
        Session(tcp::socket s, Impl& impl, uint64_t id, PendingLimit::Ticket ticket)
            : socket_(std::move(s)), impl_(impl), id_(id), ticket_(std::move(ticket)), decoder_(ps::kMaxHelloPayload),
              peer_(peerAddress(socket_)) {
            lastHeard_ = Clock::now();
        }
        void start() {
            ticket_.onEvict([weak = weak_from_this()] {
                if (auto self = weak.lock()) self->close();
            });
            read();
        }
        // Queues a whole frame; frames go out one after another, never two writes at once.
        void write(std::shared_ptr<const std::string> frame) {
            if (closed_) return;
            lastWritten_ = Clock::now();
            writes_.push_back(std::move(frame));
            if (writes_.size() == 1) writeNext();
        }
        // Says why (if `why` is not empty) and closes once that is written.
        void refuse(const std::string& why) {
            if (closed_) return;
            if (!why.empty()) {
                closeAfterWrites_ = true;
                write(std::make_shared<const std::string>(ps::ErrorMessage{why}.encode()));
            } else {
                close();
            }
        }
        void close() {
            if (closed_) return;
            closed_ = true;
            error_code ignored;
            socket_.shutdown(tcp::socket::shutdown_both, ignored);
            socket_.close(ignored);
        }
        // Sends this frame last and closes once it is out.
        void endWith(std::shared_ptr<const std::string> frame) {
            if (closed_) return;
            closeAfterWrites_ = true;
            write(std::move(frame));
        }
        bool closed() const { return closed_; }
        bool pendingWrites() const { return !writes_.empty(); }
        bool authenticated() const { return authenticated_; }
        int worker() const { return worker_; }
        uint64_t id() const { return id_; }
        const std::string& peer() const { return peer_; }
        Clock::time_point lastHeard() const { return lastHeard_; }
        Clock::time_point lastWritten() const { return lastWritten_; }
        Clock::time_point openedAt() const { return openedAt_; }
        std::optional<int64_t> step;  // the step it runs (guarded by Impl::mutex)

    private:
        void read() {
            socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](error_code ec, size_t n) {
                self->onRead(ec, n);
            });
        }
        void onRead(error_code ec, size_t n) {
            if (closed_) return;
            if (ec) {
                std::string why = ec == asio::error::eof ? "its connection closed" : "its connection failed: " + ec.message();
                try {
                    decoder_.finish();
                } catch (const ProtocolError& e) {
                    why += std::string(" (") + e.what() + ")";
                }
                close();
                impl_.lost(*this, why);
                return;
            }
            lastHeard_ = Clock::now();
            std::vector<framing::Frame> frames;
            try {
                decoder_.feed(buf_.data(), n, frames);
                for (const framing::Frame& f : frames) {
                    handle(f);
                    if (closed_) return;
                }
            } catch (const ProtocolError& e) {
                const std::string why = std::string("broke the protocol: ") + e.what();
                if (!authenticated_) impl_.refused("closed the connection from " + peer_ + ": it " + why);
                refuse(why);
                impl_.lost(*this, why);
                return;
            }
            if (authenticated_ && buf_.size() < kReadBytes) buf_.resize(kReadBytes);  // between reads
            read();
        }
        void handle(const framing::Frame& f) {
            if (!authenticated_) {
                const ps::Hello hello = ps::Hello::decode(f);
                if (!sameToken(hello.token, impl_.config.token)) {
                    impl_.refused("refused a connection from " + peer_ + ": wrong job token");
                    refuse("wrong job token");
                    return;
                }
                if (hello.role != ps::Role::Worker) {
                    const std::string why = "the coordinator serves workers; a " + ps::roleName(hello.role) + " said Hello";
                    impl_.refused("refused a connection from " + peer_ + ": " + why);
                    refuse(why);
                    return;
                }
                authenticated_ = true;
                ticket_.release();
                decoder_.setMaxPayload(kMaxWorkerPayload);
                worker_ = static_cast<int>(hello.index);
                write(std::make_shared<const std::string>(ps::Welcome{ps::Role::Coordinator, 0}.encode()));
                write(std::make_shared<const std::string>(impl_.layout.encode()));
                impl_.joined(shared_from_this());
                return;
            }
            switch (f.type) {
                case ps::kHeartbeat: ps::Heartbeat::decode(f); return;
                case ps::kResult: impl_.result(*this, ps::Result::decode(f)); return;
                case ps::kPsLost: impl_.serverLost(*this, ps::PsLost::decode(f)); return;
                case ps::kError: {
                    const std::string why = ps::ErrorMessage::decode(f).message;
                    close();
                    impl_.workerFailed(*this, why);
                    return;
                }
                default:
                    throw ProtocolError("unexpected " + ps::messageName(f.type) + " message from a worker");
            }
        }
        void writeNext() {
            asio::async_write(socket_, asio::buffer(*writes_.front()), [self = shared_from_this()](error_code ec, size_t) {
                if (self->closed_) return;
                self->writes_.pop_front();
                if (ec) {
                    self->close();
                    self->impl_.lost(*self, "its connection failed: " + ec.message());
                    return;
                }
                if (!self->writes_.empty()) self->writeNext();
                else if (self->closeAfterWrites_) self->close();
            });
        }

        tcp::socket socket_;
        Impl& impl_;
        uint64_t id_;
        PendingLimit::Ticket ticket_;  // its place among the connections waiting for their Hello
        framing::FrameDecoder decoder_;
        std::vector<uint8_t> buf_ = std::vector<uint8_t>(kHelloReadBytes);
        std::deque<std::shared_ptr<const std::string>> writes_;
        std::string peer_;
        bool authenticated_ = false;
        std::atomic<bool> closed_{false};  // read by the training thread too
        bool closeAfterWrites_ = false;
        int worker_ = -1;
        Clock::time_point lastHeard_;
        Clock::time_point lastWritten_ = Clock::now();
        Clock::time_point openedAt_ = Clock::now();
    };

    void accept() {
        acceptConnections(acceptor, acceptRetry, pending, [this](tcp::socket s, PendingLimit::Ticket ticket) {
            error_code ec;
            s.set_option(tcp::no_delay(true), ec);
            auto session = std::make_shared<Session>(std::move(s), *this, nextSession++, std::move(ticket));
            pendingHello.push_back(session);
            session->start();
        });
    }
    std::vector<std::shared_ptr<Session>> pendingHello;  // io thread only

    // A connection closed before its Hello was accepted: counted and said.
    void refused(const std::string& what) {
        ++rejected;
        log("coordinator: " + what);
    }

    // Every watch period: closes connections without Hello for kHelloTimeout, gives up on workers
    // silent for the timeout, and sends a Heartbeat to those that heard nothing for heartbeat_ms
    // (so that a worker waiting for its next task can tell a coordinator that stopped from one
    // that has no task for it yet).
    void watch() {
        watchdog.expires_after(std::clamp(std::chrono::milliseconds(layout.heartbeat_ms / 2),
                                          std::chrono::milliseconds(10), std::chrono::milliseconds(200)));
        watchdog.async_wait([this](error_code ec) {
            if (ec) return;
            const auto now = Clock::now();
            std::erase_if(pendingHello, [&](const std::shared_ptr<Session>& s) {
                if (s->closed() || s->authenticated()) return true;
                if (now - s->openedAt() < kHelloTimeout) return false;
                refused("closed the connection from " + s->peer() + ": no Hello within " + secondsText(kHelloTimeout));
                s->refuse("no Hello within " + secondsText(kHelloTimeout));
                return true;
            });
            std::vector<std::shared_ptr<Session>> silent, idleSessions;
            {
                std::lock_guard lock(mutex);
                for (auto& [id, s] : sessions) {
                    if (now - s->lastHeard() > config.timeout) silent.push_back(s);
                    else if (!s->pendingWrites() && now - s->lastWritten() >= std::chrono::milliseconds(layout.heartbeat_ms))
                        idleSessions.push_back(s);
                }
            }
            for (auto& s : idleSessions) s->write(heartbeatFrame);
            for (auto& s : silent) {
                s->close();
                lost(*s, "it sent nothing for " + secondsText(config.timeout) + " (stopped, hung or cut off)");
            }
            watch();
        });
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
            asio::post(io, [s = it->second, frame] { s->write(frame); });
        }
    }

    void joined(const std::shared_ptr<Session>& s) {
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
    void lost(Session& s, const std::string& why) {
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
    void workerFailed(Session& s, const std::string& why) {
        {
            std::lock_guard lock(mutex);
            if (!fatal) fatal = "worker " + std::to_string(s.worker()) + " (" + s.peer() + ") failed: " + why;
        }
        lost(s, "it failed: " + why);
    }

    void serverLost(Session& s, const ps::PsLost& m) {
        std::lock_guard lock(mutex);
        const std::string name = m.server < layout.servers.size() ? serverName(m.server)
                                                                   : "parameter server " + std::to_string(m.server);
        if (!fatal)
            fatal = name + " is lost (reported by worker " + std::to_string(s.worker()) + " at step " +
                    std::to_string(m.step) + "): " + m.message;
        changed.notify_all();
    }

    void result(Session& s, const ps::Result& r) {
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
    m.exampleSize = exampleSize;
    if (const std::string why = listenOn(m.acceptor, m.config.listen.host, static_cast<uint16_t>(m.config.listen.port));
        !why.empty())
        throw ConnectionError("coordinator: cannot listen on " + m.config.listen.text() + ": " + why);
    m.accept();
    m.watch();
    m.thread = std::thread([&m] { m.io.run(); });
}

PsCoordinator::~PsCoordinator() {
    Impl& m = *impl_;
    m.io.stop();
    if (m.thread.joinable()) m.thread.join();
}

uint16_t PsCoordinator::port() const { return impl_->acceptor.local_endpoint().port(); }

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
    for (auto& s : m.shutdownSent) asio::post(m.io, [s, shutdown] { s->endWith(shutdown); });
}

void PsCoordinator::awaitShutdownsSent(std::chrono::milliseconds limit) {
    Impl& m = *impl_;
    const auto deadline = Clock::now() + limit;
    for (auto& s : m.shutdownSent) {
        while (Clock::now() < deadline) {
            std::promise<bool> busy;
            auto f = busy.get_future();
            asio::post(m.io, [&busy, s] { busy.set_value(s->pendingWrites()); });
            if (!f.get()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    m.shutdownSent.clear();
}

ParameterServerStats PsCoordinator::stats() const {
    std::lock_guard lock(impl_->mutex);
    ParameterServerStats s = impl_->stats;
    s.rejected_connections = impl_->rejected.load() + impl_->pending.turnedAway();
    s.pending_connections = static_cast<int64_t>(impl_->pending.pending());
    return s;
}

}  // namespace trainbench::engine
