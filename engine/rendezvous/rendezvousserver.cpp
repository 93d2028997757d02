#include "engine/rendezvous/rendezvousserver.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility> (fixed in 1.75).
#include <utility>

#include <boost/asio.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/net/hostport.h"
#include "engine/util/errors.h"
#include "engine/net/asiolisten.h"
#include "engine/rendezvous/rendezvousmessages.h"
#include "engine/util/sametoken.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using namespace rendezvouswire;

constexpr uint32_t kMaxWaitMs = 24u * 3600u * 1000u;

class Session;

// Everything below is touched only on the server thread, so nothing is locked.
struct Shared {
    RendezvousServerConfig config;
    std::string where;  // host:port of the server, for reports
    std::unordered_map<std::string, std::vector<char>> values;
    std::vector<std::weak_ptr<Session>> waiting;
    std::atomic<int64_t> rejected{0};
    void reject(const std::string& peer, const std::string& why) {
        ++rejected;
        config.report("rendezvous store " + where + ": closed the connection from " + peer + ": " + why);
    }
};

// One client connection: requests and replies in turn, a timer for Hello and for Wait.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket socket, Shared& shared, PendingLimit::Ticket ticket)
        : socket_(std::move(socket)), timer_(socket_.get_executor()), shared_(shared), peer_(peerAddress(socket_)),
          ticket_(std::move(ticket)) {}

    void start() {
        ticket_.onEvict([weak = weak_from_this()] {
            if (auto self = weak.lock()) self->close();
        });
        timer_.expires_after(shared_.config.helloTimeout);
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec && !self->authenticated_ && self->socket_.is_open())
                self->refuse("no Hello with the job token within " +
                                 std::to_string(self->shared_.config.helloTimeout.count()) + " ms",
                             false);
        });
        readHeader();
    }

    // After a Set: answers a pending Wait whose keys are now all there.
    void keysArrived() {
        if (!waiting_ || !missingKeys().empty()) return;
        waiting_ = false;
        timer_.cancel();
        reply(MessageType::Ok, {});
    }
    bool isWaiting() const { return waiting_; }

private:
    void readHeader() {
        asio::async_read(socket_, asio::buffer(header_), [self = shared_from_this()](error_code ec, size_t n) {
            self->onHeader(ec, n);
        });
    }

    void onHeader(error_code ec, size_t n) {
        if (ec) {
            if (ec == asio::error::eof && n > 0)
                refuse("connection closed inside a message header (" + std::to_string(n) + " of " +
                           std::to_string(kHeaderBytes) + " bytes)",
                       false);
            else
                close();
            return;
        }
        const std::string problem = checkHeader(header_.data(), shared_.config.maxPayloadBytes, &parsed_);
        if (!problem.empty()) {
            // A foreign magic is not our protocol: nothing to answer. Otherwise say what was wrong.
            refuse(problem, hasOurMagic(header_.data()));
            return;
        }
        if (!isRequest(parsed_.type)) {
            const std::string name = messageTypeName(parsed_.type);
            refuse("unexpected message type " + std::to_string(parsed_.type) + " (" + name + ")", true);
            return;
        }
        if (!authenticated_ && parsed_.type != static_cast<uint16_t>(MessageType::Hello)) {
            refuse(std::string(messageTypeName(parsed_.type)) + " before Hello", true);
            return;
        }
        if (!authenticated_ && parsed_.length > 4 + kMaxTokenBytes) {  // strangers get no big buffers
            refuse("Hello of " + std::to_string(parsed_.length) + " bytes (a token has at most " +
                       std::to_string(kMaxTokenBytes) + ")",
                   true);
            return;
        }
        payload_.resize(parsed_.length);
        asio::async_read(socket_, asio::buffer(payload_), [self = shared_from_this()](error_code e, size_t got) {
            if (!e) return self->handle();
            if (e == asio::error::eof)
                self->refuse("connection closed inside a " + std::string(messageTypeName(self->parsed_.type)) +
                                 " message (" + std::to_string(got) + " of " + std::to_string(self->parsed_.length) +
                                 " payload bytes)",
                             false);
            else
                self->close();
        });
    }

    void handle() {
        Request r;
        if (const std::string why = decodeRequest(parsed_.type, payload_.data(), payload_.size(), &r); !why.empty())
            return refuse(why, true);
        switch (r.type) {
            case MessageType::Hello:
                if (authenticated_) return refuse("a second Hello", true);
                if (!sameToken(r.token, shared_.config.token))
                    return refuse("wrong job token: this process does not belong to the job this store serves", true);
                authenticated_ = true;
                ticket_.release();
                timer_.cancel();
                return reply(MessageType::Ok, {});
            case MessageType::Set:
                shared_.values[r.key] = std::move(r.value);
                reply(MessageType::Ok, {});
                wakeWaiters();
                return;
            case MessageType::Get: {
                const auto it = shared_.values.find(r.key);
                if (it == shared_.values.end()) return reply(MessageType::NotFound, PayloadWriter().str(r.key).data());
                return reply(MessageType::Ok, std::string(it->second.begin(), it->second.end()));
            }
            case MessageType::Wait:
                waitKeys_ = std::move(r.keys);
                return startWait(std::min(r.timeoutMs, kMaxWaitMs));
            default: return refuse("unexpected message type", true);  // isRequest() let it through
        }
    }

    std::vector<std::string> missingKeys() const {
        std::vector<std::string> missing;
        for (const std::string& k : waitKeys_)
            if (!shared_.values.count(k)) missing.push_back(k);
        return missing;
    }

    void startWait(uint32_t timeoutMs) {
        if (missingKeys().empty()) return reply(MessageType::Ok, {});
        waiting_ = true;
        shared_.waiting.push_back(weak_from_this());
        const uint64_t generation = ++waitGeneration_;
        timer_.expires_after(std::chrono::milliseconds(timeoutMs));
        timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
            if (ec || !self->waiting_ || generation != self->waitGeneration_) return;
            self->waiting_ = false;
            self->reply(MessageType::TimedOut, encodeKeyList(self->missingKeys()));
        });
    }

    void wakeWaiters() {
        std::vector<std::weak_ptr<Session>> still;
        const auto waiting = std::move(shared_.waiting);
        shared_.waiting.clear();
        for (const auto& w : waiting) {
            if (auto s = w.lock()) {
                s->keysArrived();
                if (s->isWaiting()) still.push_back(w);
            }
        }
        for (auto& w : still) shared_.waiting.push_back(std::move(w));
    }

    void reply(MessageType type, const std::string& payload, bool closeAfter = false) {
        out_ = frame(type, payload);
        asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this(), closeAfter](error_code ec, size_t) {
            if (ec || closeAfter) return self->close();
            self->readHeader();
        });
    }

    // Reports, answers with an Error if `answer` (the client can then say why it was refused), closes.
    void refuse(const std::string& why, bool answer) {
        shared_.reject(peer_, why);
        waiting_ = false;
        timer_.cancel();
        if (answer) return reply(MessageType::Error, PayloadWriter().str(why).data(), true);
        close();
    }

    void close() {
        waiting_ = false;
        timer_.cancel();
        error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
    }

    tcp::socket socket_;
    asio::steady_timer timer_;
    Shared& shared_;
    std::string peer_;
    PendingLimit::Ticket ticket_;  // its place among the connections waiting for their Hello
    std::array<uint8_t, kHeaderBytes> header_{};
    Header parsed_;
    std::vector<uint8_t> payload_;
    std::string out_;
    bool authenticated_ = false;
    bool waiting_ = false;
    uint64_t waitGeneration_ = 0;
    std::vector<std::string> waitKeys_;
};


}  // namespace

struct RendezvousServer::Impl {
    Shared shared;  // outlives the io_context below, whose pending handlers hold sessions
    std::optional<PendingLimit> pending;
    std::optional<asio::io_context> io;
    std::optional<tcp::acceptor> acceptor;
    std::thread thread;
    uint16_t port = 0;

    std::optional<asio::steady_timer> backoff;

    void accept() {
        acceptConnections(*acceptor, *backoff, *pending, [this](tcp::socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<Session>(std::move(socket), shared, std::move(ticket))->start();
        });
    }
};

RendezvousServer::RendezvousServer(RendezvousServerConfig config) : impl_(std::make_unique<Impl>()) {
    if (config.token.empty()) throw std::invalid_argument("RendezvousServer: the job token must not be empty");
    if (!config.report)
        config.report = [](const std::string& line) { std::fprintf(stderr, "trainbench: %s\n", line.c_str()); };
    Impl& m = *impl_;
    m.io.emplace(1);
    const std::string wanted = net::formatHostPort(config.host, config.port);
    m.acceptor.emplace(*m.io);
    m.backoff.emplace(*m.io);
    if (const std::string why = listenOn(*m.acceptor, config.host, config.port); !why.empty())
        throw RendezvousError("rendezvous store: cannot listen on " + wanted + ": " + why);
    m.port = m.acceptor->local_endpoint().port();
    m.shared.where = net::formatHostPort(config.host, m.port);
    m.shared.config = std::move(config);
    m.pending.emplace([&m](const std::string& line) { m.shared.config.report("rendezvous store " + m.shared.where + ": " + line); });
    m.accept();
    m.thread = std::thread([&m] {
        try {
            m.io->run();
        } catch (const std::exception& e) {  // a handler threw (out of memory): say so rather than terminate
            m.shared.config.report("rendezvous store " + m.shared.where + " stopped: " + e.what());
        }
    });
}

RendezvousServer::~RendezvousServer() { stop(); }

void RendezvousServer::stop() {
    Impl& m = *impl_;
    if (!m.io) return;
    m.io->stop();
    if (m.thread.joinable()) m.thread.join();
    m.acceptor.reset();
    m.backoff.reset();
    m.io.reset();  // destroys the pending handlers, hence the sessions and their sockets
}

uint16_t RendezvousServer::port() const { return impl_->port; }
std::string RendezvousServer::address() const { return impl_->shared.where; }
int64_t RendezvousServer::rejectedConnections() const {
    return impl_->shared.rejected.load() + impl_->pending->turnedAway();
}
int64_t RendezvousServer::pendingConnections() const { return static_cast<int64_t>(impl_->pending->pending()); }

std::string RendezvousServer::randomToken() {
    std::random_device rd;
    std::string token;
    static const char* hex = "0123456789abcdef";
    for (int i = 0; i < 4; ++i) {
        const uint32_t v = rd();
        for (int j = 0; j < 8; ++j) token += hex[(v >> (4 * j)) & 0xF];
    }
    return token;
}

}  // namespace trainbench::engine
