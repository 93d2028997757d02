#include "engine/strategy/parameterserver.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility> (fixed in 1.75).
#include <utility>

#include <boost/asio.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/net/hostport.h"
#include "engine/strategy/parametershard.h"
#include "engine/strategy/psprotocol.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "engine/util/errors.h"
#include "engine/device/cpudevice.h"
#include "engine/net/asiolisten.h"
#include "engine/util/durationtext.h"
#include "engine/util/sametoken.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using framing::Frame;
using Clock = std::chrono::steady_clock;

// Reads go into a buffer this large once a peer has said Hello, and a small one before: a stranger
// costs no more than its Hello can be.
constexpr size_t kReadBytes = 64 * 1024;
constexpr size_t kHelloReadBytes = 256;

enum class Outcome { Running, Shutdown, CoordinatorLost, Stopped, Failed };

// What the connections share. Touched on the server thread only, except the counters and the
// outcome, which waitUntilDone() and the accessors read from others.
struct Server {
    Server(ParameterServerConfig c, std::string w) : config(std::move(c)), where(std::move(w)), shard(config.optimizer, config.index) {}

    ParameterServerConfig config;
    std::string where;  // "parameter server 0 at 127.0.0.1:4000", for reports and errors
    ParameterShard shard;
    bool coordinatorConnected = false;
    bool coordinatorEverConnected = false;
    std::string coordinatorPeer;
    Clock::time_point startedAt = Clock::now();
    Clock::time_point lastFromCoordinator;
    std::atomic<int64_t> updates{0}, pulls{0}, rejected{0};

    std::mutex doneMutex;
    std::condition_variable doneChanged;
    Outcome outcome = Outcome::Running;
    std::string why;  // of CoordinatorLost and Failed

    void report(const std::string& line) const { config.report(where + ": " + line); }
    bool running() {
        std::lock_guard lock(doneMutex);
        return outcome == Outcome::Running;
    }
    // The first outcome sticks: a coordinator that closes after its Shutdown is not lost.
    void finish(Outcome o, const std::string& reason = {}) {
        {
            std::lock_guard lock(doneMutex);
            if (outcome != Outcome::Running) return;
            outcome = o;
            why = reason;
        }
        doneChanged.notify_all();
    }
};

// One client connection: frames in through a FrameDecoder, replies out through a queue (one write
// in flight at a time), in the order the requests came.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(tcp::socket socket, Server& server, PendingLimit::Ticket ticket)
        : socket_(std::move(socket)), helloTimer_(socket_.get_executor()), server_(server), peer_(peerAddress(socket_)),
          ticket_(std::move(ticket)), decoder_(ps::kMaxHelloPayload) {
        error_code ec;
        socket_.set_option(tcp::no_delay(true), ec);  // Params and Pushed go out at once
    }

    void start() {
        ticket_.onEvict([weak = weak_from_this()] {
            if (auto self = weak.lock()) self->close("");
        });
        helloTimer_.expires_after(server_.config.helloTimeout);
        helloTimer_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec && !self->role_)
                self->refuse("no Hello with the job token within " +
                             std::to_string(self->server_.config.helloTimeout.count()) + " ms");
        });
        read();
    }

private:
    void read() {
        socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](error_code ec, size_t n) {
            self->onRead(ec, n);
        });
    }

    void onRead(error_code ec, size_t n) {
        if (closed_ || closing_) return;
        if (ec == asio::error::eof) {
            try {
                decoder_.finish();
            } catch (const ProtocolError& e) {
                return refuse(std::string("connection closed inside a frame: ") + e.what());
            }
            return close(isCoordinator() ? "the coordinator closed its connection without Shutdown" : "");
        }
        if (ec) return close(isCoordinator() ? "the coordinator's connection was lost: " + ec.message() : "");
        if (isCoordinator()) server_.lastFromCoordinator = Clock::now();
        try {
            feed(buffer_.data(), n);
        } catch (const std::exception& e) {  // ProtocolError, or no memory for the shard an Init asks for
            return refuse(e.what());
        }
        if (role_ && buffer_.size() < kReadBytes) buffer_.resize(kReadBytes);  // between reads: nothing points into it
        if (!closed_ && !closing_) read();
    }

    void feed(const uint8_t* data, size_t n) {
        std::vector<Frame> frames;
        // Until Hello is in, one byte at a time, so that the frames after it are read with the larger
        // cap (a client may send them before Welcome arrives).
        for (; n > 0 && !role_ && !closing_ && !closed_; ++data, --n) {
            decoder_.feed(data, 1, frames);
            if (!frames.empty()) handle(frames.front());
            frames.clear();
        }
        if (n == 0 || closing_ || closed_) return;
        decoder_.feed(data, n, frames);
        for (const Frame& f : frames) {
            if (closing_ || closed_) return;
            handle(f);
        }
    }

    void handle(const Frame& f) {
        if (f.type == ps::kError) {
            // The peer says why it closes: nothing to answer.
            std::string why;
            try {
                why = ps::ErrorMessage::decode(f).message;
            } catch (const ProtocolError& e) {
                why = std::string("(an unreadable Error message: ") + e.what() + ")";
            }
            server_.report(who() + " closed its connection: " + why);
            return close(isCoordinator() ? "the coordinator closed its connection without Shutdown: " + why : "");
        }
        if (!role_) return hello(f);
        if (isCoordinator()) return fromCoordinator(f);
        fromWorker(f);
    }

    void hello(const Frame& f) {
        if (f.type != ps::kHello) return refuse(ps::messageName(f.type) + " message before Hello");
        const ps::Hello h = ps::Hello::decode(f);
        if (!sameToken(h.token, server_.config.token))
            return refuse("wrong job token: this process does not belong to the job this parameter server serves");
        if (h.role == ps::Role::ParameterServer) return refuse("a parameter server has nothing to ask another");
        if (h.role == ps::Role::Coordinator) {
            if (server_.coordinatorConnected) return refuse("a coordinator is connected already");
            server_.coordinatorConnected = true;
            server_.coordinatorEverConnected = true;
            server_.coordinatorPeer = peer_;
            server_.lastFromCoordinator = Clock::now();
        }
        role_ = h.role;
        index_ = h.index;
        ticket_.release();
        helloTimer_.cancel();
        decoder_.setMaxPayload(server_.config.maxPayload);
        send(ps::Welcome{ps::Role::ParameterServer, server_.config.index}.encode());
    }

    void fromCoordinator(const Frame& f) {
        ParameterShard& shard = server_.shard;
        switch (f.type) {
            case ps::kInit:
                shard.init(ps::Init::decode(f));
                return send(ps::InitDone{shard.version()}.encode());
            case ps::kGetState:
                ps::GetState::decode(f);
                requireInit("GetState");
                return send(shard.state().encode());
            case ps::kPull:
                ps::Pull::decode(f);
                return pull();
            case ps::kShutdown:
                ps::Shutdown::decode(f);
                return server_.finish(Outcome::Shutdown);
            case ps::kHeartbeat:
                ps::Heartbeat::decode(f);  // it is alive: onRead() noted the time
                return;
            default:
                return refuse("unexpected " + ps::messageName(f.type) + " message from the coordinator");
        }
    }

    void fromWorker(const Frame& f) {
        switch (f.type) {
            case ps::kPull:
                ps::Pull::decode(f);
                return pull();
            case ps::kPush: {
                const ps::Push push = ps::Push::decode(f);
                if (push.worker != index_)
                    return refuse("Push message names worker " + std::to_string(push.worker) + ", the connection is worker " +
                                  std::to_string(index_) + "'s");
                const ps::Pushed pushed = server_.shard.apply(push);
                ++server_.updates;  // before send(), as in pull()
                return send(pushed.encode());
            }
            default:
                return refuse("unexpected " + ps::messageName(f.type) +
                              " message from a worker (workers Pull and Push; the rest is the coordinator's)");
        }
    }

    void pull() {
        requireInit("Pull");
        const ParameterShard& shard = server_.shard;
        ++server_.pulls;  // before send(): Asio may write at once, and the client read its counter after
        send(ps::Params::encode(shard.version(), shard.values().data(), shard.values().size()));
    }

    void requireInit(const char* message) const {
        if (!server_.shard.initialized())
            throw ProtocolError(std::string(message) + " message before Init: the shard is not initialized yet");
    }

    void send(std::string frameBytes) {
        outbox_.push_back(std::move(frameBytes));
        if (!writing_) writeNext();
    }

    void writeNext() {
        writing_ = true;
        asio::async_write(socket_, asio::buffer(outbox_.front()), [self = shared_from_this()](error_code ec, size_t) {
            self->writing_ = false;
            if (self->closed_) return;
            if (ec && self->closing_) return self->close(self->closingWhy_);
            if (ec) return self->close(self->isCoordinator() ? "the coordinator's connection was lost: " + ec.message() : "");
            self->outbox_.pop_front();
            if (!self->outbox_.empty()) return self->writeNext();
            if (self->closing_) self->close(self->closingWhy_);
        });
    }

    // Reports, tells the peer why (an Error message) and closes once that is written.
    void refuse(const std::string& why) {
        if (closing_ || closed_) return;
        ++server_.rejected;
        server_.report("closed the connection from " + who() + ": " + why);
        closing_ = true;
        closingWhy_ = isCoordinator() ? "this server closed the coordinator's connection: " + why : "";
        helloTimer_.cancel();
        send(ps::ErrorMessage{why}.encode());
    }

    // `coordinatorLost`: why the job cannot go on, if this is the coordinator's connection.
    void close(const std::string& coordinatorLost) {
        if (closed_) return;
        closed_ = true;
        helloTimer_.cancel();
        error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
        if (isCoordinator()) {
            server_.coordinatorConnected = false;
            server_.finish(Outcome::CoordinatorLost, coordinatorLost);
        }
    }

    bool isCoordinator() const { return role_ == ps::Role::Coordinator; }

    std::string who() const {
        if (!role_) return peer_;
        if (*role_ == ps::Role::Worker) return peer_ + " (worker " + std::to_string(index_) + ")";
        return peer_ + " (the " + ps::roleName(*role_) + ")";
    }

    tcp::socket socket_;
    asio::steady_timer helloTimer_;
    Server& server_;
    std::string peer_;
    PendingLimit::Ticket ticket_;  // its place among the connections waiting for their Hello
    framing::FrameDecoder decoder_;
    std::vector<uint8_t> buffer_ = std::vector<uint8_t>(kHelloReadBytes);
    std::deque<std::string> outbox_;  // encoded frames; the front one is being written
    bool writing_ = false;
    bool closing_ = false;  // refused: the Error goes out, nothing more is read
    bool closed_ = false;
    std::string closingWhy_;
    std::optional<ps::Role> role_;  // set by a valid Hello
    uint32_t index_ = 0;
};


}  // namespace

struct ParameterServer::Impl {
    std::unique_ptr<Server> server;  // outlives the io_context below, whose pending handlers hold connections
    std::optional<PendingLimit> pending;
    std::optional<asio::io_context> io;
    std::optional<tcp::acceptor> acceptor;
    std::optional<asio::steady_timer> backoff;
    std::optional<asio::steady_timer> watchdog;
    std::thread thread;
    uint16_t port = 0;

    void accept() {
        acceptConnections(*acceptor, *backoff, *pending, [this](tcp::socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<Connection>(std::move(socket), *server, std::move(ticket))->start();
        });
    }

    // The coordinator must connect within connectTimeout, then be heard from at least every timeout:
    // otherwise the job is gone (the chief stopped, hung or cut off) and waitUntilDone() says so.
    void watch() {
        watchdog->expires_after(std::clamp(server->config.timeout / 8, std::chrono::milliseconds(10),
                                           std::chrono::milliseconds(250)));
        watchdog->async_wait([this](error_code ec) {
            if (ec) return;
            Server& s = *server;
            const auto now = Clock::now();
            if (s.coordinatorConnected && now - s.lastFromCoordinator > s.config.timeout)
                s.finish(Outcome::CoordinatorLost, "the coordinator (" + s.coordinatorPeer + ") sent nothing for " +
                                                       secondsText(s.config.timeout) + " (stopped, hung or cut off)");
            else if (!s.coordinatorEverConnected && now - s.startedAt > s.config.connectTimeout)
                s.finish(Outcome::CoordinatorLost, "no coordinator connected within " +
                                                       secondsText(s.config.connectTimeout) +
                                                       " (is the chief running, and does its cluster spec name this "
                                                       "address?)");
            if (s.running()) watch();
        });
    }
};

ParameterServer::ParameterServer(ParameterServerConfig config) : impl_(std::make_unique<Impl>()) {
    if (config.token.empty()) throw std::invalid_argument("ParameterServer: the job token must not be empty");
    if (!config.report)
        config.report = [](const std::string& line) { std::fprintf(stderr, "trainbench: %s\n", line.c_str()); };
    Impl& m = *impl_;
    m.io.emplace(1);
    const std::string wanted = net::formatHostPort(config.host, config.port);
    m.acceptor.emplace(*m.io);
    m.backoff.emplace(*m.io);
    if (const std::string why = listenOn(*m.acceptor, config.host, config.port); !why.empty())
        throw ConnectionError("parameter server " + std::to_string(config.index) + ": cannot listen on " + wanted + ": " +
                              why);
    m.port = m.acceptor->local_endpoint().port();
    const std::string where =
        "parameter server " + std::to_string(config.index) + " at " + net::formatHostPort(config.host, m.port);
    m.server = std::make_unique<Server>(std::move(config), where);
    m.pending.emplace([&m](const std::string& line) { m.server->report(line); });
    m.watchdog.emplace(*m.io);
    m.accept();
    m.watch();
    m.thread = std::thread([&m] {
        bindComputeThreads(std::max(1, m.server->config.threads));
        try {
            m.io->run();
        } catch (const std::exception& e) {  // a handler threw past its connection: say so rather than terminate
            m.server->report(std::string("stopped: ") + e.what());
            m.server->finish(Outcome::Failed, std::string("stopped: ") + e.what());
        }
    });
}

ParameterServer::~ParameterServer() { stop(); }

void ParameterServer::stop() {
    Impl& m = *impl_;
    if (!m.io) return;
    m.io->stop();
    if (m.thread.joinable()) m.thread.join();
    m.acceptor.reset();
    m.backoff.reset();
    m.watchdog.reset();
    m.io.reset();  // destroys the pending handlers, hence the connections and their sockets
    m.server->finish(Outcome::Stopped);
}

bool ParameterServer::waitUntilDone(const std::atomic<bool>* stop) {
    Server& s = *impl_->server;
    std::unique_lock lock(s.doneMutex);
    // The watchdog bounds this wait (connectTimeout, then the timeout between the coordinator's messages).
    while (s.outcome == Outcome::Running) {
        if (stop && stop->load()) return false;
        s.doneChanged.wait_for(lock, std::chrono::milliseconds(100));
    }
    if (s.outcome == Outcome::CoordinatorLost) throw ConnectionError(s.where + ": " + s.why);
    if (s.outcome == Outcome::Failed) throw std::runtime_error(s.where + ": " + s.why);
    return true;
}

uint16_t ParameterServer::port() const { return impl_->port; }
std::string ParameterServer::address() const {
    return net::formatHostPort(impl_->server->config.host, impl_->port);
}
int64_t ParameterServer::updatesApplied() const { return impl_->server->updates.load(); }
int64_t ParameterServer::pullsServed() const { return impl_->server->pulls.load(); }
int64_t ParameterServer::rejectedConnections() const {
    return impl_->server->rejected.load() + impl_->pending->turnedAway();
}
int64_t ParameterServer::pendingConnections() const { return static_cast<int64_t>(impl_->pending->pending()); }

}  // namespace trainbench::engine
