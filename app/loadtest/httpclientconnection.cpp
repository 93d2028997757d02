#include "app/loadtest/httpclientconnection.h"

#include "app/loadtest/servertiming.h"
#include "engine/net/hostport.h"

namespace trainbench::app::loadtest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

namespace {

std::string peerText(const asio::ip::tcp::endpoint& peer) {
    return engine::net::formatHostPort(peer.address().to_string(), peer.port());
}

// The server closed a kept-alive connection between two requests: sending again on a fresh one is
// what every HTTP client does, and says nothing about the request.
bool closedWhileIdle(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe;
}

}  // namespace

HttpClientConnection::HttpClientConnection(asio::io_context& io, asio::ip::tcp::endpoint peer, size_t maxResponseBytes)
    : stream_(io), peer_(std::move(peer)), maxResponseBytes_(maxResponseBytes) {}

void HttpClientConnection::close() {
    error_code ignored;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.close();
    buffer_.clear();
    connected_ = false;
    reused_ = false;
}

void HttpClientConnection::connect(Clock::time_point deadline, std::function<void(std::string)> done) {
    stream_.expires_at(deadline);
    stream_.async_connect(peer_, [this, done = std::move(done)](error_code ec) {
        connected_ = !ec;
        done(ec ? "cannot connect to " + peerText(peer_) + ": " + ec.message() : std::string{});
    });
}

void HttpClientConnection::exchange(const std::string& request, Clock::time_point deadline, Done done) {
    request_ = &request;
    deadline_ = deadline;
    done_ = std::move(done);
    result_ = {};
    reused_ = connected_;
    if (connected_) return send();
    connect(deadline, [this](const std::string& error) {
        if (!error.empty()) {
            result_.error = error;
            return std::exchange(done_, nullptr)(std::move(result_));
        }
        send();
    });
}

void HttpClientConnection::send() {
    stream_.expires_at(deadline_);
    asio::async_write(stream_, asio::buffer(*request_), [this](error_code ec, size_t) {
        if (ec) return finish(ec, "sending the request");
        result_.written = Clock::now();
        read();
    });
}

void HttpClientConnection::read() {
    parser_.emplace();
    parser_->body_limit(maxResponseBytes_);
    http::async_read(stream_, buffer_, *parser_, [this](error_code ec, size_t) {
        if (ec) return finish(ec, "reading the response");
        result_.received = Clock::now();
        auto& response = parser_->get();
        result_.status = static_cast<int>(response.result_int());
        if (const auto it = response.find(beast::string_view(kTimingHeader.data(), kTimingHeader.size())); it != response.end()) result_.timing = std::string(it->value());
        const bool keepAlive = response.keep_alive();
        result_.body = std::move(response.body());
        parser_.reset();
        if (!keepAlive) close();
        std::exchange(done_, nullptr)(std::move(result_));
    });
}

void HttpClientConnection::finish(error_code ec, const char* during) {
    const bool retry = reused_ && closedWhileIdle(ec) && Clock::now() < deadline_;
    close();
    if (retry) {
        return exchange(*request_, deadline_, std::exchange(done_, nullptr));
    }
    result_.error = ec == beast::error::timeout
                        ? "no answer from " + peerText(peer_) + " by the request deadline (" + during + ")"
                        : peerText(peer_) + ": " + ec.message() + " while " + during;
    std::exchange(done_, nullptr)(std::move(result_));
}

}  // namespace trainbench::app::loadtest
