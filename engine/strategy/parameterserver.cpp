#include "engine/strategy/parameterserver.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "engine/device/cpudevice.h"
#include "engine/net/framedconnection.h"
#include "engine/net/hostport.h"
#include "engine/strategy/parametershard.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/durationtext.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using framing::Frame;
using Clock = std::chrono::steady_clock;

enum class Outcome { Running, Shutdown, CoordinatorLost, Stopped, Failed };

// What the connections share. Touched on the server thread only, except the counters and the
// outcome, which waitUntilDone() and the accessors read from others.
struct Server {
    explicit Server(ParameterServerConfig c) : config(std::move(c)), shard(config.optimizer, config.index) {}

    ParameterServerConfig config;
    std::string where;  // "parameter server 0 at 127.0.0.1:4000", for reports and errors
    ParameterShard shard;
    bool coordinatorConnected = false;
    bool coordinatorEverConnected = false;
    Clock::time_point startedAt = Clock::now();
    std::atomic<int64_t> updates{0}, pulls{0};

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

// One client connection: frames in, replies out in the order the requests came.
class Connection : public FramedConnection {
public:
    Connection(AsioServer& asio, tcp::socket socket, PendingLimit::Ticket ticket, Server& server)
        : FramedConnection(asio, std::move(socket), std::move(ticket), ps::kMaxHelloPayload), server_(server) {
        error_code ec;
        this->socket().set_option(tcp::no_delay(true), ec);  // Params and Pushed go out at once
    }

    void start() { startReading(); }

private:
    void onHelloTimeout() override {
        refuse("no Hello with the job token within " + std::to_string(server().helloTimeout().count()) + " ms");
    }

    // The coordinator's connection only (workers have no silence deadline): the job is gone.
    void onSilent() override {
        server_.finish(Outcome::CoordinatorLost, "the coordinator (" + peer() + ") sent nothing for " +
                                                     secondsText(server_.config.timeout) + " (stopped, hung or cut off)");
    }

    void onStreamEnd(const error_code& ec) override {
        if (ec == asio::error::eof) {
            try {
                decoder().finish();
            } catch (const ProtocolError& e) {
                return refuse(std::string("connection closed inside a frame: ") + e.what());
            }
            return closeFor(isCoordinator() ? "the coordinator closed its connection without Shutdown" : "");
        }
        closeFor(isCoordinator() ? "the coordinator's connection was lost: " + ec.message() : "");
    }

    // ProtocolError, or no memory for the shard an Init asks for.
    void onBadStream(const std::exception& e) override { refuse(e.what()); }

    void onWriteFailed(const error_code& ec) override {
        if (closing()) return close();  // closeFor() was given why when it began
        closeFor(isCoordinator() ? "the coordinator's connection was lost: " + ec.message() : "");
    }

    void onFrame(const Frame& f) override {
        if (f.type == ps::kError) {
            // The peer says why it closes: nothing to answer.
            std::string why;
            try {
                why = ps::ErrorMessage::decode(f).message;
            } catch (const ProtocolError& e) {
                why = std::string("(an unreadable Error message: ") + e.what() + ")";
            }
            server_.report(who() + " closed its connection: " + why);
            return closeFor(isCoordinator() ? "the coordinator closed its connection without Shutdown: " + why : "");
        }
        if (!role_) return hello(f);
        if (isCoordinator()) return fromCoordinator(f);
        fromWorker(f);
    }

    void hello(const Frame& f) {
        if (f.type != ps::kHello) return refuse(ps::messageName(f.type) + " message before Hello");
        const ps::Hello h = ps::Hello::decode(f);
        if (!presentsJobToken(h.token))
            return refuse("wrong job token: this process does not belong to the job this parameter server serves");
        if (h.role == ps::Role::ParameterServer) return refuse("a parameter server has nothing to ask another");
        if (h.role == ps::Role::Coordinator) {
            if (server_.coordinatorConnected) return refuse("a coordinator is connected already");
            server_.coordinatorConnected = true;
            server_.coordinatorEverConnected = true;
        }
        role_ = h.role;
        index_ = h.index;
        // The coordinator silent for the timeout is lost (it sends a Heartbeat when it has nothing else to say).
        admitFrames(server_.config.maxPayload, isCoordinator() ? server_.config.timeout : std::chrono::milliseconds(0));
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
                ps::Heartbeat::decode(f);  // it is alive: the read pushed its silence deadline back
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

    // Reports, tells the peer why (an Error message) and closes once that is written.
    void refuse(const std::string& why) {
        if (closing() || closed()) return;
        server().countRejected();
        server_.report("closed the connection from " + who() + ": " + why);
        lostWhy_ = isCoordinator() ? "this server closed the coordinator's connection: " + why : "";
        sendThenClose(ps::ErrorMessage{why}.encode());
    }

    // `coordinatorLost`: why the job cannot go on, if this is the coordinator's connection.
    void closeFor(const std::string& coordinatorLost) {
        if (closed()) return;
        lostWhy_ = coordinatorLost;
        close();
    }

    void onClosed() override {
        if (!isCoordinator()) return;
        server_.coordinatorConnected = false;
        server_.finish(Outcome::CoordinatorLost, lostWhy_);
    }

    bool isCoordinator() const { return role_ == ps::Role::Coordinator; }

    std::string who() const {
        if (!role_) return peer();
        if (*role_ == ps::Role::Worker) return peer() + " (worker " + std::to_string(index_) + ")";
        return peer() + " (the " + ps::roleName(*role_) + ")";
    }

    Server& server_;
    std::string lostWhy_;           // what closing this connection means to the job (the coordinator's)
    std::optional<ps::Role> role_;  // set by a valid Hello
    uint32_t index_ = 0;
};

}  // namespace

struct ParameterServer::Impl {
    std::unique_ptr<Server> server;  // outlives `asio`, whose pending handlers hold connections
    std::optional<AsioServer> asio;

    // The coordinator must connect within connectTimeout (once connected, its connection's silence
    // deadline watches it): otherwise the job is gone and waitUntilDone() says so.
    bool watch() {
        Server& s = *server;
        if (!s.coordinatorEverConnected && Clock::now() - s.startedAt > s.config.connectTimeout)
            s.finish(Outcome::CoordinatorLost, "no coordinator connected within " + secondsText(s.config.connectTimeout) +
                                                   " (is the chief running, and does its cluster spec name this "
                                                   "address?)");
        return s.running();
    }
};

ParameterServer::ParameterServer(ParameterServerConfig config) : impl_(std::make_unique<Impl>()) {
    if (config.token.empty()) throw std::invalid_argument("ParameterServer: the job token must not be empty");
    if (!config.report)
        config.report = [](const std::string& line) { std::fprintf(stderr, "trainbench: %s\n", line.c_str()); };
    Impl& m = *impl_;
    m.server = std::make_unique<Server>(std::move(config));
    Server& s = *m.server;
    m.asio.emplace(s.config.token, s.config.helloTimeout, [&s](const std::string& line) { s.report(line); });
    if (const std::string why = m.asio->listen(s.config.host, s.config.port); !why.empty())
        throw ConnectionError("parameter server " + std::to_string(s.config.index) + ": cannot listen on " +
                              net::formatHostPort(s.config.host, s.config.port) + ": " + why);
    s.where = "parameter server " + std::to_string(s.config.index) + " at " + m.asio->address();
    m.asio->every(std::clamp(s.config.timeout / 8, std::chrono::milliseconds(10), std::chrono::milliseconds(250)),
                  [&m] { return m.watch(); });
    AsioServer::Hooks hooks;
    hooks.onThreadStart = [&s] { bindComputeThreads(std::max(1, s.config.threads)); };
    hooks.onFailure = [&s](const std::string& what) {  // a handler threw past its connection
        s.report("stopped: " + what);
        s.finish(Outcome::Failed, "stopped: " + what);
    };
    m.asio->start(
        [&m](tcp::socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<Connection>(*m.asio, std::move(socket), std::move(ticket), *m.server)->start();
        },
        std::move(hooks));
}

ParameterServer::~ParameterServer() { stop(); }

void ParameterServer::stop() {
    impl_->asio->stop();
    impl_->server->finish(Outcome::Stopped);
}

bool ParameterServer::waitUntilDone(const std::atomic<bool>* stop) {
    Server& s = *impl_->server;
    std::unique_lock lock(s.doneMutex);
    // Bounded: by the watchdog (connectTimeout), then by the coordinator's silence deadline (the timeout).
    while (s.outcome == Outcome::Running) {
        if (stop && stop->load()) return false;
        s.doneChanged.wait_for(lock, std::chrono::milliseconds(100));
    }
    if (s.outcome == Outcome::CoordinatorLost) throw ConnectionError(s.where + ": " + s.why);
    if (s.outcome == Outcome::Failed) throw std::runtime_error(s.where + ": " + s.why);
    return true;
}

uint16_t ParameterServer::port() const { return impl_->asio->port(); }
std::string ParameterServer::address() const { return impl_->asio->address(); }
int64_t ParameterServer::updatesApplied() const { return impl_->server->updates.load(); }
int64_t ParameterServer::pullsServed() const { return impl_->server->pulls.load(); }
int64_t ParameterServer::rejectedConnections() const { return impl_->asio->rejectedConnections(); }
int64_t ParameterServer::pendingConnections() const { return impl_->asio->pendingConnections(); }

}  // namespace trainbench::engine
