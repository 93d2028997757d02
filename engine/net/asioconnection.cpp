#include "engine/net/asioconnection.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
}  // namespace

AsioConnection::AsioConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket)
    : server_(server), socket_(std::move(socket)), peer_(peerAddress(socket_)), ticket_(std::move(ticket)),
      deadline_(socket_.get_executor()) {}

void AsioConnection::startConnection() {
    ticket_.onEvict([weak = weak_from_this()] {
        if (auto self = weak.lock()) self->close();
    });
    armDeadline(Clock::now() + server_.helloTimeout());
}

void AsioConnection::admit(std::chrono::milliseconds silence) {
    admitted_ = true;
    ticket_.release();
    silence_ = silence;
    heard();
    if (silence_.count() > 0) {
        armDeadline(lastHeard_ + silence_);
    } else {
        ++deadlineGeneration_;
        deadline_.cancel();
    }
}

// One timer serves both deadlines: the Hello's until admit(), then the silence one, which is moved
// on lazily (when it fires early because the peer was heard since) rather than on every read.
void AsioConnection::armDeadline(Clock::time_point at) {
    const uint64_t generation = ++deadlineGeneration_;
    deadline_.expires_at(at);
    deadline_.async_wait([self = shared_from_this(), generation](error_code ec) {
        if (!ec && generation == self->deadlineGeneration_) self->onDeadline();
    });
}

void AsioConnection::onDeadline() {
    if (closed_) return;
    if (!admitted_) {
        if (!closeAfterWrites_) onHelloTimeout();
        return;
    }
    if (silence_.count() == 0) return;
    const Clock::time_point due = lastHeard_ + silence_;
    if (Clock::now() < due) return armDeadline(due);
    onSilent();
}

void AsioConnection::send(Bytes bytes) {
    if (closed_) return;
    lastWritten_ = Clock::now();
    writes_.push_back(std::move(bytes));
    if (writes_.size() == 1) writeNext();
}

void AsioConnection::sendThenClose(std::string bytes) {
    sendThenClose(std::make_shared<const std::string>(std::move(bytes)));
}

void AsioConnection::sendThenClose(Bytes bytes) {
    if (closed_) return;
    closeAfterWrites_ = true;
    send(std::move(bytes));
}

void AsioConnection::writeNext() {
    asio::async_write(socket_, asio::buffer(*writes_.front()), [self = shared_from_this()](error_code ec, size_t) {
        if (self->closed_) return;
        self->writes_.pop_front();
        if (ec) return self->onWriteFailed(ec);
        if (!self->writes_.empty()) return self->writeNext();
        if (self->closeAfterWrites_) return self->close();
        self->onSent();
    });
}

void AsioConnection::close() {
    if (closed_.exchange(true)) return;
    ++deadlineGeneration_;
    deadline_.cancel();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    onClosed();
}

}  // namespace trainbench::engine
