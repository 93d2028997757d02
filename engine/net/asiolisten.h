#pragma once
// The listening side of a job's servers (the rendezvous store, a parameter server, the coordinator):
// opening the socket (a literal address or a host name resolved once, SO_REUSEADDR, bound and
// listening) and accepting connections on it, no more waiting for their Hello than PendingLimit
// allows.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/net/hostport.h"
#include "engine/net/pendinglimit.h"

namespace trainbench::engine {

// Opens `acceptor` on host:port (port 0: any free one). Returns "" on success, otherwise why not
// ("cannot resolve the host: ...", "Address already in use"), for the caller's own error.
inline std::string listenOn(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port) {
    namespace asio = boost::asio;
    using tcp = asio::ip::tcp;
    boost::system::error_code ec;
    asio::ip::address address = asio::ip::make_address(host, ec);
    if (ec) {
        tcp::resolver resolver(acceptor.get_executor());
        const auto results = resolver.resolve(host, "0", ec);
        if (ec || results.empty()) return "cannot resolve the host: " + ec.message();
        address = results.begin()->endpoint().address();
    }
    const tcp::endpoint endpoint(address, port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    return ec ? ec.message() : std::string();
}

// The peer of an accepted socket as host:port ("[::1]:80" for IPv6), for reports and errors.
inline std::string peerAddress(const boost::asio::ip::tcp::socket& socket) {
    boost::system::error_code ec;
    const boost::asio::ip::tcp::endpoint ep = socket.remote_endpoint(ec);
    return ec ? std::string("an unknown peer") : net::formatHostPort(ep.address().to_string(), ep.port());
}

// Accepts connections on `acceptor` until it is closed, handing each socket with its place in
// `pending` to `onSocket(socket, ticket)` on the io thread; the connection gives the place back when
// it has said Hello (ticket.release()) or closes. One that `pending` has no place for is closed at
// once (it has cost nothing but the accept). An accept that fails (out of file descriptors, say)
// tries again after 50 ms on `retry` instead of spinning the io thread. `acceptor`, `retry` and
// `pending` must outlive the pending handlers.
template <class OnSocket>
void acceptConnections(boost::asio::ip::tcp::acceptor& acceptor, boost::asio::steady_timer& retry,
                       PendingLimit& pending, OnSocket onSocket) {
    acceptor.async_accept([&acceptor, &retry, &pending, onSocket](boost::system::error_code ec,
                                                                  boost::asio::ip::tcp::socket socket) mutable {
        if (ec == boost::asio::error::operation_aborted || !acceptor.is_open()) return;
        if (!ec) {
            if (std::optional<PendingLimit::Ticket> ticket = pending.admit(peerAddress(socket))) {
                onSocket(std::move(socket), std::move(*ticket));
            } else {
                boost::system::error_code ignored;
                socket.close(ignored);
            }
            acceptConnections(acceptor, retry, pending, std::move(onSocket));
            return;
        }
        retry.expires_after(std::chrono::milliseconds(50));
        retry.async_wait([&acceptor, &retry, &pending, onSocket](boost::system::error_code e) mutable {
            if (!e) acceptConnections(acceptor, retry, pending, std::move(onSocket));
        });
    });
}

}  // namespace trainbench::engine
