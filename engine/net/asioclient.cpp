#include "engine/net/asioclient.h"

#include <algorithm>
#include <thread>

namespace trainbench::engine {

namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
}  // namespace

bool runUntil(asio::io_context& io, tcp::socket& socket, Clock::time_point deadline) {
    io.restart();
    io.run_until(deadline);
    if (io.stopped()) return true;
    error_code ignored;
    socket.close(ignored);
    io.restart();
    io.run();  // the aborted operations' handlers
    return false;
}

std::string connectWithin(asio::io_context& io, tcp::socket& socket, const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout, const std::string& hint) {
    const auto deadline = Clock::now() + timeout;
    tcp::resolver resolver(io);
    error_code ec;
    const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
    if (ec) return "cannot resolve host '" + host + "': " + ec.message();
    auto pause = std::chrono::milliseconds(10);
    std::string last;
    while (true) {
        error_code cec = asio::error::timed_out;
        asio::async_connect(socket, endpoints, [&](error_code e, const tcp::endpoint&) { cec = e; });
        const bool finished = runUntil(io, socket, std::min(deadline, Clock::now() + std::chrono::seconds(5)));
        if (finished && !cec) return {};
        last = finished ? cec.message() : "no answer to the connection attempt";
        error_code ignored;
        socket.close(ignored);
        const auto now = Clock::now();
        if (now >= deadline)
            return "could not connect within " + std::to_string(timeout.count()) + " ms (last error: " + last + "); " +
                   hint;
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(250));
    }
}

}  // namespace trainbench::engine
