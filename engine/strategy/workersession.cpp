#include "engine/strategy/workersession.h"

#include "engine/util/durationtext.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Workers' Task and Result messages carry a batch; anything larger than this is not one of ours.
constexpr uint64_t kMaxWorkerPayload = 64ull << 20;
}  // namespace

WorkerSession::WorkerSession(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket,
                             WorkerSessionOwner& owner, uint64_t id, std::shared_ptr<const std::string> layoutFrame,
                             std::chrono::milliseconds timeout)
    : FramedConnection(server, std::move(socket), std::move(ticket), ps::kMaxHelloPayload), owner_(owner), id_(id),
      layoutFrame_(std::move(layoutFrame)), timeout_(timeout) {
    error_code ec;
    this->socket().set_option(tcp::no_delay(true), ec);
}

void WorkerSession::refuse(const std::string& why) {
    if (closed()) return;
    if (why.empty()) return close();
    sendThenClose(ps::ErrorMessage{why}.encode());
}

void WorkerSession::onHelloTimeout() {
    const std::string why = "no Hello within " + secondsText(server().helloTimeout());
    owner_.refused("closed the connection from " + peer() + ": " + why);
    refuse(why);
}

void WorkerSession::onStreamEnd(const error_code& ec) {
    std::string why = ec == asio::error::eof ? "its connection closed" : "its connection failed: " + ec.message();
    try {
        decoder().finish();
    } catch (const ProtocolError& e) {
        why += std::string(" (") + e.what() + ")";
    }
    close();
    owner_.lost(*this, why);
}

void WorkerSession::onBadStream(const std::exception& e) {
    const std::string why = std::string("broke the protocol: ") + e.what();
    if (!admitted()) owner_.refused("closed the connection from " + peer() + ": it " + why);
    refuse(why);
    owner_.lost(*this, why);
}

void WorkerSession::onWriteFailed(const error_code& ec) {
    close();
    owner_.lost(*this, "its connection failed: " + ec.message());
}

void WorkerSession::onFrame(const framing::Frame& f) {
    if (!admitted()) return hello(f);
    switch (f.type) {
        case ps::kHeartbeat: ps::Heartbeat::decode(f); return;
        case ps::kResult: owner_.result(*this, ps::Result::decode(f)); return;
        case ps::kPsLost: owner_.serverLost(*this, ps::PsLost::decode(f)); return;
        case ps::kError: {
            const std::string why = ps::ErrorMessage::decode(f).message;
            close();
            owner_.workerFailed(*this, why);
            return;
        }
        default: throw ProtocolError("unexpected " + ps::messageName(f.type) + " message from a worker");
    }
}

void WorkerSession::hello(const framing::Frame& f) {
    const ps::Hello hello = ps::Hello::decode(f);
    if (!presentsJobToken(hello.token)) {
        owner_.refused("refused a connection from " + peer() + ": wrong job token");
        return refuse("wrong job token");
    }
    if (hello.role != ps::Role::Worker) {
        const std::string why = "the coordinator serves workers; a " + ps::roleName(hello.role) + " said Hello";
        owner_.refused("refused a connection from " + peer() + ": " + why);
        return refuse(why);
    }
    worker_ = static_cast<int>(hello.index);
    admitFrames(kMaxWorkerPayload, timeout_);
    write(std::make_shared<const std::string>(ps::Welcome{ps::Role::Coordinator, 0}.encode()));
    write(layoutFrame_);
    owner_.joined(self<WorkerSession>());
}

}  // namespace trainbench::engine
