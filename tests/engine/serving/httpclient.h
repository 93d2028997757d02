#pragma once
// A real HTTP/1.1 client for the server's tests: Beast over a loopback TCP connection, kept alive
// across requests, every exchange bounded by a deadline (a server that does not answer fails the
// test instead of hanging it). Plus rawExchange(): bytes as written, for requests Beast would not send.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <map>
#include <string>

#include "tests/engine/loopbacksocket.h"

namespace trainbench::engine::serving::test {

struct HttpReply {
    int status = 0;  // 0: no answer (the error says why)
    std::string body;
    std::map<std::string, std::string> headers;
    std::string error;
};

class HttpClient {
public:
    explicit HttpClient(uint16_t port, std::chrono::milliseconds deadline = std::chrono::seconds(20))
        : stream_(io_), deadline_(deadline) {
        stream_.expires_after(deadline_);
        stream_.async_connect({boost::asio::ip::make_address("127.0.0.1"), port}, [this](boost::system::error_code ec) { ec_ = ec; });
        run();
    }
    bool connected() const { return !ec_; }

    HttpReply request(const std::string& method, const std::string& target, const std::string& body = {},
                      const std::map<std::string, std::string>& headers = {}) {
        namespace http = boost::beast::http;
        http::request<http::string_body> req(http::string_to_verb(method), target, 11);
        req.set(http::field::host, "127.0.0.1");
        for (const auto& [k, v] : headers) req.set(k, v);
        req.body() = body;
        if (!body.empty() || method == "POST") req.prepare_payload();
        HttpReply reply;
        http::response<http::string_body> res;
        stream_.expires_after(deadline_);
        http::async_write(stream_, req, [&](boost::system::error_code ec, size_t) {
            if (ec) return void(reply.error = "write: " + ec.message());
            http::async_read(stream_, buffer_, res, [&](boost::system::error_code e, size_t) {
                if (e) reply.error = "read: " + e.message();
            });
        });
        run();
        if (!reply.error.empty()) return reply;
        reply.status = static_cast<int>(res.result_int());
        reply.body = res.body();
        for (const auto& f : res) reply.headers[std::string(f.name_string())] = std::string(f.value());
        return reply;
    }

private:
    void run() {
        io_.restart();
        io_.run();
    }
    boost::asio::io_context io_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::chrono::milliseconds deadline_;
    boost::system::error_code ec_;
};

// Sends `bytes` as they are on a new connection and reads until the server closes it or
// `deadline` passes; returns what came back.
inline std::string rawExchange(uint16_t port, const std::string& bytes,
                               std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
    const int fd = engine::test::connectToLoopback(port);
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    std::string out;
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        char buf[4096];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

}  // namespace trainbench::engine::serving::test
