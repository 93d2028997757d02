#include "engine/rendezvous/rendezvousserver.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "engine/net/asioconnection.h"
#include "engine/net/hostport.h"
#include "engine/rendezvous/rendezvousmessages.h"
#include "engine/util/errors.h"

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
    std::string prefixed(const std::string& line) const { return "rendezvous store " + where + ": " + line; }
};

// One client connection: requests and replies in turn, a timer for Wait.
class Session : public AsioConnection {
public:
    Session(AsioServer& server, tcp::socket socket, PendingLimit::Ticket ticket, Shared& shared)
        : AsioConnection(server, std::move(socket), std::move(ticket)), waitTimer_(this->socket().get_executor()),
          shared_(shared) {}

    void start() {
        startConnection();
        readHeader();
    }

    // After a Set: answers a pending Wait whose keys are now all there.
    void keysArrived() {
        if (!waiting_ || !missingKeys().empty()) return;
        waiting_ = false;
        waitTimer_.cancel();
        reply(MessageType::Ok, {});
    }
    bool isWaiting() const { return waiting_; }

private:
    void onHelloTimeout() override {
        refuse("no Hello with the job token within " + std::to_string(server().helloTimeout().count()) + " ms", false);
    }
    void onSent() override { readHeader(); }  // one request, one reply, in turn
    void onClosed() override {
        waiting_ = false;
        waitTimer_.cancel();
    }

    void readHeader() {
        asio::async_read(socket(), asio::buffer(header_), [self = self<Session>()](error_code ec, size_t n) {
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
        if (!admitted() && parsed_.type != static_cast<uint16_t>(MessageType::Hello)) {
            refuse(std::string(messageTypeName(parsed_.type)) + " before Hello", true);
            return;
        }
        if (!admitted() && parsed_.length > 4 + kMaxTokenBytes) {  // strangers get no big buffers
            refuse("Hello of " + std::to_string(parsed_.length) + " bytes (a token has at most " +
                       std::to_string(kMaxTokenBytes) + ")",
                   true);
            return;
        }
        payload_.resize(parsed_.length);
        asio::async_read(socket(), asio::buffer(payload_), [self = self<Session>()](error_code e, size_t got) {
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
                if (admitted()) return refuse("a second Hello", true);
                if (!presentsJobToken(r.token))
                    return refuse("wrong job token: this process does not belong to the job this store serves", true);
                admit();
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
        shared_.waiting.push_back(self<Session>());
        const uint64_t generation = ++waitGeneration_;
        waitTimer_.expires_after(std::chrono::milliseconds(timeoutMs));
        waitTimer_.async_wait([self = self<Session>(), generation](error_code ec) {
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
        if (closeAfter) return sendThenClose(frame(type, payload));
        send(frame(type, payload));
    }

    // Reports, answers with an Error if `answer` (the client can then say why it was refused), closes.
    void refuse(const std::string& why, bool answer) {
        server().countRejected();
        shared_.config.report(shared_.prefixed("closed the connection from " + peer() + ": " + why));
        waiting_ = false;
        waitTimer_.cancel();
        if (answer) return reply(MessageType::Error, PayloadWriter().str(why).data(), true);
        close();
    }

    asio::steady_timer waitTimer_;
    Shared& shared_;
    std::array<uint8_t, kHeaderBytes> header_{};
    Header parsed_;
    std::vector<uint8_t> payload_;
    bool waiting_ = false;
    uint64_t waitGeneration_ = 0;
    std::vector<std::string> waitKeys_;
};

}  // namespace

struct RendezvousServer::Impl {
    Shared shared;  // outlives the server below, whose pending handlers hold sessions
    std::optional<AsioServer> server;
};

RendezvousServer::RendezvousServer(RendezvousServerConfig config) : impl_(std::make_unique<Impl>()) {
    if (config.token.empty()) throw std::invalid_argument("RendezvousServer: the job token must not be empty");
    if (!config.report)
        config.report = [](const std::string& line) { std::fprintf(stderr, "trainbench: %s\n", line.c_str()); };
    Impl& m = *impl_;
    m.shared.config = std::move(config);
    const RendezvousServerConfig& c = m.shared.config;
    m.server.emplace(c.token, c.helloTimeout, [&m](const std::string& line) { m.shared.config.report(m.shared.prefixed(line)); });
    if (const std::string why = m.server->listen(c.host, c.port); !why.empty())
        throw RendezvousError("rendezvous store: cannot listen on " + net::formatHostPort(c.host, c.port) + ": " + why);
    m.shared.where = m.server->address();
    AsioServer::Hooks hooks;
    hooks.onFailure = [&m](const std::string& what) {  // a handler threw (out of memory)
        m.shared.config.report("rendezvous store " + m.shared.where + " stopped: " + what);
    };
    m.server->start(
        [&m](tcp::socket socket, PendingLimit::Ticket ticket) {
            std::make_shared<Session>(*m.server, std::move(socket), std::move(ticket), m.shared)->start();
        },
        std::move(hooks));
}

RendezvousServer::~RendezvousServer() { stop(); }

void RendezvousServer::stop() { impl_->server->stop(); }

uint16_t RendezvousServer::port() const { return impl_->server->port(); }
std::string RendezvousServer::address() const { return impl_->shared.where; }
int64_t RendezvousServer::rejectedConnections() const { return impl_->server->rejectedConnections(); }
int64_t RendezvousServer::pendingConnections() const { return impl_->server->pendingConnections(); }

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
