#pragma once
// The connecting side of a job's clients (RendezvousClient, FramedClient), on an io_context of the
// client's own that only the calling thread runs: every wait has a deadline.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace trainbench::engine {

// Runs `io`'s pending operations until they are all done (true) or `deadline` passes (false:
// `socket` is closed, and the aborted operations' handlers have run).
bool runUntil(boost::asio::io_context& io, boost::asio::ip::tcp::socket& socket,
              std::chrono::steady_clock::time_point deadline);

// Connects `socket` to host:port within `timeout`, retrying while nobody listens there yet (the
// server may still be starting), more slowly as time goes by; an attempt nobody answers is given
// up after 5 s. Returns "" once connected, otherwise why not, for the caller's error:
// "cannot resolve host 'h': ...", or "could not connect within 300 ms (last error: ...); " + hint.
std::string connectWithin(boost::asio::io_context& io, boost::asio::ip::tcp::socket& socket, const std::string& host,
                          uint16_t port, std::chrono::milliseconds timeout, const std::string& hint);

}  // namespace trainbench::engine
