#pragma once
// Opening the listening socket of a job's servers (the rendezvous store, a parameter server, the
// coordinator): a literal address or a host name resolved once, SO_REUSEADDR, bound and listening.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>

#include <cstdint>
#include <string>

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

}  // namespace trainbench::engine
