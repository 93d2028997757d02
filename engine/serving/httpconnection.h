#pragma once
// One client's HTTP/1.1 connection to the inference server: Beast parses each request on the io
// thread under the limits (header size, body size) and deadlines (header, body, write, keep-alive
// idle) of ServingLimits; the predict body goes to a request thread to be decoded and scheduled;
// the answer comes back to the io thread to be written. One request at a time per connection
// (the next is read once the answer is written), kept alive unless the client says close.
// Until its first request's header is complete a connection waits among the AsioServer's
// pending ones (the header is its "Hello"): a client that trickles it is closed at header_timeout.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <string>

#include "engine/net/asioconnection.h"
#include "engine/serving/batchtask.h"
#include "engine/serving/predictrequest.h"
#include "engine/serving/servingcontext.h"

namespace trainbench::engine::serving {

class HttpConnection : public AsioConnection {
public:
    // Makes the connection and starts reading its first request (io thread).
    static void open(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket, ServingContext& ctx);

private:
    using Request = boost::beast::http::request<boost::beast::http::string_body>;
    HttpConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket, ServingContext& ctx);

    void readRequest();
    void readHeader();
    void onHeader(const boost::system::error_code& ec);
    void onBody(const boost::system::error_code& ec);
    bool readFailed(const boost::system::error_code& ec);
    std::string announcedLength();
    void handle(Request& request);
    void predict(std::string body);
    // On a request thread: decode, then schedule (or answer the failure).
    void decodeAndSchedule(const std::string& body);
    void finishPredict(const BatchTask& task, PredictRequest::Format format, int64_t decodeMicros);
    // Any thread: respond() on the io thread.
    void respondLater(int status, std::string body, std::string headers = {});
    void respond(int status, std::string_view contentType, std::string body, std::string headers = {});
    void fail(int status, const std::string& reason, const std::string& message, std::string headers = {});

    bool reserveBody();
    void releaseBody();
    void arm(std::chrono::milliseconds after);
    void disarm();
    void onHelloTimeout() override;
    void onSent() override;
    void onClosed() override;

    ServingContext& ctx_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    boost::asio::steady_timer timer_;
    uint64_t timerGeneration_ = 0;
    bool keepAlive_ = true;
    bool interim_ = false;     // a "100 Continue" is being written, the body is being read
    int64_t bodyBytes_ = 0;    // this request's share of ctx_.inflightBodyBytes
    bool predicting_ = false;  // the request in hand is a predict (its latency is observed)
    Clock::time_point headerAt_;
};

}  // namespace trainbench::engine::serving
