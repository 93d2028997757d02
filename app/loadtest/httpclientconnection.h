#pragma once
// One keep-alive HTTP/1.1 connection of the load generator (Boost.Beast on Asio): a request goes
// out, its response comes back, then the next request may use the connection. It connects on first
// use, and again after the server closed it; every connect, write and read has the exchange's
// deadline. Used by one handler chain at a time (the pool hands it out), on any io thread.
// Included by .cpp files only: Asio stays out of public headers.
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace trainbench::app::loadtest {

struct HttpExchange {
    std::string error;   // "" when a response arrived; otherwise what failed, naming the peer
    int status = 0;
    std::string body;
    std::string timing;  // the X-Trainbench-Timing header's value, "" when absent
    std::chrono::steady_clock::time_point written, received;
};

class HttpClientConnection {
public:
    using Clock = std::chrono::steady_clock;
    using Done = std::function<void(HttpExchange&&)>;

    HttpClientConnection(boost::asio::io_context& io, boost::asio::ip::tcp::endpoint peer, size_t maxResponseBytes);

    // Sends `request` (complete HTTP bytes, kept alive by the caller until `done`) and calls `done`
    // with the response or the failure, by `deadline` at the latest.
    void exchange(const std::string& request, Clock::time_point deadline, Done done);
    // Opens the connection ahead of the measurement; `done` gets "" or why not.
    void connect(Clock::time_point deadline, std::function<void(std::string)> done);
    void close();

private:
    void send();
    void read();
    void finish(boost::system::error_code ec, const char* during);

    boost::beast::tcp_stream stream_;
    boost::asio::ip::tcp::endpoint peer_;
    size_t maxResponseBytes_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
    bool connected_ = false;
    // The exchange runs on a connection opened before it (by an earlier exchange or ahead of the
    // measurement): the server may have closed it since, while it sat idle.
    bool reused_ = false;
    const std::string* request_ = nullptr;
    Clock::time_point deadline_;
    HttpExchange result_;
    Done done_;
};

}  // namespace trainbench::app::loadtest
