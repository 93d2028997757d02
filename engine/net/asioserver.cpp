#include "engine/net/asioserver.h"

#include "engine/net/hostport.h"
#include "engine/util/sametoken.h"

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
}  // namespace

std::string peerAddress(const tcp::socket& socket) {
    error_code ec;
    const tcp::endpoint ep = socket.remote_endpoint(ec);
    return ec ? std::string("an unknown peer") : net::formatHostPort(ep.address().to_string(), ep.port());
}

AsioServer::AsioServer(std::string token, std::chrono::milliseconds helloTimeout,
                       std::function<void(const std::string&)> pendingReport, size_t maxPending)
    : token_(std::move(token)), helloTimeout_(helloTimeout), pending_(std::move(pendingReport), maxPending) {
    io_.emplace(1);
    acceptor_.emplace(*io_);
    acceptRetry_.emplace(*io_);
}

AsioServer::~AsioServer() { stop(); }

std::string AsioServer::listen(const std::string& host, uint16_t port) {
    error_code ec;
    asio::ip::address address = asio::ip::make_address(host, ec);
    if (ec) {
        tcp::resolver resolver(*io_);
        const auto results = resolver.resolve(host, "0", ec);
        if (ec || results.empty()) return "cannot resolve the host: " + ec.message();
        address = results.begin()->endpoint().address();
    }
    const tcp::endpoint endpoint(address, port);
    acceptor_->open(endpoint.protocol(), ec);
    if (!ec) acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return ec.message();
    host_ = host;
    port_ = acceptor_->local_endpoint().port();
    return {};
}

std::string AsioServer::address() const { return net::formatHostPort(host_, port_); }

bool AsioServer::isJobToken(std::string_view presented) const { return sameToken(presented, token_); }

void AsioServer::every(std::chrono::milliseconds period, std::function<bool()> tick) {
    tickAfter(ticks_.emplace_back(*io_), period, std::move(tick));
}

void AsioServer::tickAfter(asio::steady_timer& timer, std::chrono::milliseconds period, std::function<bool()> tick) {
    timer.expires_after(period);
    timer.async_wait([this, &timer, period, tick = std::move(tick)](error_code ec) mutable {
        if (!ec && tick()) tickAfter(timer, period, std::move(tick));
    });
}

void AsioServer::start(OnConnection onConnection, Hooks hooks) {
    onConnection_ = std::move(onConnection);
    onHalted_ = std::move(hooks.onHalted);
    accept();
    thread_ = std::thread([this, onStart = std::move(hooks.onThreadStart), onFailure = std::move(hooks.onFailure)] {
        if (onStart) onStart();
        try {
            io_->run();
        } catch (const std::exception& e) {  // a handler threw past its connection: say so rather than terminate
            if (onFailure) onFailure(e.what());
        }
    });
}

// Each connection gets its place among those waiting for their Hello before anything is made for
// it; one that has no place is closed at once (it has cost nothing but the accept). An accept that
// fails (out of file descriptors, say) tries again after 50 ms instead of spinning the io thread.
void AsioServer::accept() {
    acceptor_->async_accept([this](error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
        if (!ec) {
            if (std::optional<PendingLimit::Ticket> ticket = pending_.admit(peerAddress(socket))) {
                onConnection_(std::move(socket), std::move(*ticket));
            } else {
                error_code ignored;
                socket.close(ignored);
            }
            accept();
            return;
        }
        acceptRetry_->expires_after(std::chrono::milliseconds(50));
        acceptRetry_->async_wait([this](error_code e) {
            if (!e) accept();
        });
    });
}

void AsioServer::stop() {
    if (!io_) return;
    io_->stop();
    if (thread_.joinable()) thread_.join();
    if (onHalted_) onHalted_();
    acceptor_.reset();
    acceptRetry_.reset();
    ticks_.clear();
    io_.reset();  // destroys the pending handlers, hence the connections and their sockets
}

}  // namespace trainbench::engine
