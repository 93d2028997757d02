#include "engine/serving/httpconnection.h"

#include <boost/beast/http/error.hpp>

#include "engine/serving/httpresponse.h"
#include "engine/serving/restdocuments.h"
#include "engine/serving/route.h"
#include "engine/util/elapsed.h"

namespace trainbench::engine::serving {

namespace {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

// Answers of at most this many floats are encoded on the batch thread (finishPredict).
constexpr size_t kInlineEncodeFloats = 4096;
// Bodies of at most this many bytes are decoded on the io thread (predict).
constexpr size_t kInlineDecodeBytes = 8192;
}  // namespace

void HttpConnection::open(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket,
                          ServingContext& ctx) {
    std::shared_ptr<HttpConnection> c(new HttpConnection(server, std::move(socket), std::move(ticket), ctx));
    ++ctx.metrics.connectionsOpen;
    c->startConnection();  // the first header's deadline: header_timeout from now
    c->readRequest();
}

HttpConnection::HttpConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket,
                               ServingContext& ctx)
    : AsioConnection(server, std::move(socket), std::move(ticket)), ctx_(ctx), timer_(this->socket().get_executor()) {}

void HttpConnection::readRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(ctx_.options.limits.max_header_bytes));
    parser_->body_limit(static_cast<uint64_t>(ctx_.options.limits.max_body_bytes));
    if (!admitted()) return readHeader();  // the first header runs on the Hello deadline
    if (buffer_.size() > 0) {  // pipelined: the next request has begun already
        arm(ctx_.options.limits.header_timeout);
        return readHeader();
    }
    // Kept alive: idle until the next request's first byte, then header_timeout for its header.
    arm(ctx_.options.limits.keepalive_timeout);
    socket().async_wait(asio::socket_base::wait_read, [self = self<HttpConnection>()](error_code ec) {
        if (self->closed()) return;
        if (ec) return self->close();
        self->arm(self->ctx_.options.limits.header_timeout);
        self->readHeader();
    });
}

void HttpConnection::readHeader() {
    http::async_read_header(socket(), buffer_, *parser_,
                            [self = self<HttpConnection>()](error_code ec, size_t) { self->onHeader(ec); });
}

// A failed read: the peer went away (closed quietly) or sent what is not HTTP within our limits
// (answered, then closed: the stream cannot be resynchronised).
bool HttpConnection::readFailed(const error_code& ec) {
    if (!ec) return false;
    if (closed()) return true;
    keepAlive_ = false;
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
        ec == http::error::partial_message || ec == asio::error::operation_aborted)
        close();
    else if (ec == http::error::header_limit)
        fail(431, "header_too_large",
             "the request line and headers are over " + std::to_string(ctx_.options.limits.max_header_bytes) +
                 " bytes (max_header_bytes)");
    else if (ec == http::error::body_limit)
        fail(413, "body_too_large",
             "the body" + announcedLength() + " is over the limit of " +
                 std::to_string(ctx_.options.limits.max_body_bytes) + " bytes (max_body_bytes)");
    else
        fail(400, "malformed_http", "malformed HTTP request: " + ec.message());
    return true;
}

// " of 2000000 bytes" when the header announced it. Beast refuses a Content-Length over the body
// limit while still in the header, before the header counts as done; the field is read directly.
std::string HttpConnection::announcedLength() {
    const auto field = parser_->get()[http::field::content_length];
    if (field.empty() || field.size() > 19) return {};
    for (char c : field)
        if (c < '0' || c > '9') return {};
    return " of " + std::string(field) + " bytes";
}

void HttpConnection::onHeader(const error_code& ec) {
    if (readFailed(ec)) return;
    headerAt_ = Clock::now();
    if (!admitted()) admit();  // no longer pending: the header was its Hello
    keepAlive_ = parser_->get().keep_alive();
    if (parser_->is_done()) {
        disarm();
        return handle(parser_->get());
    }
    if (!reserveBody()) {
        keepAlive_ = false;
        return fail(503, "busy", "the server is reading " + std::to_string(ctx_.inflightBodyBytes.load()) +
                                     " bytes of request bodies already (max_inflight_body_bytes " +
                                     std::to_string(ctx_.options.limits.max_inflight_body_bytes) + "); try again later",
                    "Retry-After: 1\r\n");
    }
    arm(ctx_.options.limits.body_timeout);
    const auto expect = parser_->get()[http::field::expect];
    if (boost::beast::iequals(expect, "100-continue")) {  // curl asks before a body over 1 KiB
        interim_ = true;
        send(std::string("HTTP/1.1 100 Continue\r\n\r\n"));
    }
    http::async_read(socket(), buffer_, *parser_, [self = self<HttpConnection>()](error_code e, size_t) { self->onBody(e); });
}

void HttpConnection::onBody(const error_code& ec) {
    if (readFailed(ec)) return;
    disarm();
    handle(parser_->get());
}

void HttpConnection::handle(Request& request) {
    const std::string& token = ctx_.options.auth_token;
    if (!token.empty()) {
        const auto field = request[http::field::authorization];
        const std::string_view auth(field.data(), field.size());
        if (auth.substr(0, 7) != "Bearer " || !presentsJobToken(auth.substr(7)))
            return fail(401, "unauthorized", "missing or wrong bearer token (Authorization: Bearer <token>)",
                        "WWW-Authenticate: Bearer\r\n");
    }
    const std::string target(request.target());
    const Route route = parseRoute(target);
    if (route.kind == Route::Kind::Invalid) return fail(route.status, "bad_endpoint", route.message);
    if (request.method_string() != route.allowedMethod())
        return fail(405, "method", "method " + std::string(request.method_string()) + " is not allowed on " + target +
                                       ", use " + route.allowedMethod(),
                    std::string("Allow: ") + route.allowedMethod() + "\r\n");
    if (route.kind == Route::Kind::Metrics)
        return respond(200, kMetricsType,
                       ctx_.metrics.prometheusText(ctx_.scheduler->enqueuedBatches(), ctx_.scheduler->enqueuedTasks()));
    const Servable& s = ctx_.servable;
    if (route.model != s.name)
        return fail(404, "not_found", "Servable not found for request: no model \"" + route.model +
                                          "\"; this server serves \"" + s.name + "\"");
    if (route.version && *route.version != s.version)
        return fail(404, "not_found", "Servable not found for request: model \"" + s.name + "\" has no version " +
                                          std::to_string(*route.version) + ", only " + std::to_string(s.version));
    if (route.kind == Route::Kind::Status) return respond(200, kJsonType, modelStatusJson(s));
    if (route.kind == Route::Kind::Metadata) return respond(200, kJsonType, modelMetadataJson(s));
    predict(std::move(request.body()));
}

void HttpConnection::predict(std::string body) {
    predicting_ = true;
    // A small body (an image or two) is decoded here, on the io thread: handing it to a request
    // thread costs more than the decoding (the fast path reads a 784-pixel image in ~30 us). Larger
    // ones go to the request threads, so that one big body never holds up the other connections.
    if (body.size() <= kInlineDecodeBytes) return decodeAndSchedule(body);
    auto job = [self = self<HttpConnection>(), body = std::move(body)] { self->decodeAndSchedule(body); };
    if (!ctx_.requests.post(std::move(job))) fail(503, "stopping", "the server is stopping");
}

void HttpConnection::decodeAndSchedule(const std::string& body) {
    const auto start = Clock::now();
    PredictRequest request;
    const std::string error = decodePredictRequest(body, ctx_.servable, ctx_.options.batching.max_batch_size, request);
    const int64_t decodeMicros = micros(Clock::now() - start);
    if (!error.empty()) {
        ctx_.metrics.countError("bad_request");
        return respondLater(400, errorJson(error));
    }
    auto task = std::make_unique<BatchTask>();
    task->input = std::move(request.data);
    task->size = request.size;
    task->done = [self = self<HttpConnection>(), format = request.format, decodeMicros](std::unique_ptr<BatchTask> t) {
        // A small answer (a few logits) is encoded here, on the batch thread: handing it to a request
        // thread would cost more than the encoding. A large one goes to the request threads.
        if (t->output.size() <= kInlineEncodeFloats) return self->finishPredict(*t, format, decodeMicros);
        auto encode = [self, format, decodeMicros, t = std::shared_ptr<const BatchTask>(std::move(t))] {
            self->finishPredict(*t, format, decodeMicros);
        };
        if (!self->ctx_.requests.post(encode)) encode();  // stopping: the batch thread encodes
    };
    switch (ctx_.scheduler->schedule(task)) {
        case BatchScheduler::Admission::Accepted: return;
        case BatchScheduler::Admission::QueueFull:
            ctx_.metrics.countError("queue_full");
            return respondLater(503, errorJson("the batch queue is full (" +
                                               std::to_string(ctx_.options.batching.max_enqueued_batches) +
                                               " batches waiting, max_enqueued_batches); try again later"),
                                "Retry-After: 1\r\n");
        case BatchScheduler::Admission::TooLarge:  // the decoder caps instances at max_batch_size already
            ctx_.metrics.countError("bad_request");
            return respondLater(400, errorJson("instances: more than max_batch_size"));
        case BatchScheduler::Admission::Stopped:
            ctx_.metrics.countError("stopping");
            return respondLater(503, errorJson("the server is stopping"));
    }
}

void HttpConnection::finishPredict(const BatchTask& task, PredictRequest::Format format, int64_t decodeMicros) {
    if (!task.error.empty()) {
        const bool stopping = task.error == BatchScheduler::kStopping;
        ctx_.metrics.countError(stopping ? "stopping" : "model");
        return respondLater(stopping ? 503 : 500, errorJson(stopping ? task.error : "the model failed: " + task.error));
    }
    const auto start = Clock::now();
    std::string body = predictionsJson(task.output.data(), task.size, ctx_.servable.outputs, format);
    const int64_t encodeMicros = micros(Clock::now() - start);
    ctx_.metrics.observeQueue(task.queueMicros);
    respondLater(200, std::move(body),
                 "X-Trainbench-Timing: decode_us=" + std::to_string(decodeMicros) +
                     ",queue_us=" + std::to_string(task.queueMicros) + ",batch_us=" + std::to_string(task.batchMicros) +
                     ",compute_us=" + std::to_string(task.computeMicros) + ",encode_us=" + std::to_string(encodeMicros) +
                     ",batch=" + std::to_string(task.batchExamples) + ",padded=" + std::to_string(task.batchPadded) +
                     "\r\n");
}

void HttpConnection::respondLater(int status, std::string body, std::string headers) {
    asio::post(server().io(), [self = self<HttpConnection>(), status, body = std::move(body), headers = std::move(headers)]() mutable {
        self->respond(status, kJsonType, std::move(body), std::move(headers));
    });
}

void HttpConnection::fail(int status, const std::string& reason, const std::string& message, std::string headers) {
    ctx_.metrics.countError(reason);
    respond(status, kJsonType, errorJson(message), std::move(headers));
}

void HttpConnection::respond(int status, std::string_view contentType, std::string body, std::string headers) {
    ctx_.metrics.countResponse(status);
    if (predicting_) ctx_.metrics.observeLatency(micros(Clock::now() - headerAt_));
    predicting_ = false;
    releaseBody();
    interim_ = false;  // the answer follows a "100 Continue" still being written: onSent() comes after both
    if (closed()) return;
    arm(ctx_.options.limits.write_timeout);
    std::string bytes = httpResponse(status, contentType, body, keepAlive_, headers);
    if (keepAlive_) send(std::move(bytes));
    else sendThenClose(std::move(bytes));
}

// The body's bytes count against the server's budget from its header until its answer: the
// announced length, or max_body_bytes for a chunked body.
bool HttpConnection::reserveBody() {
    const auto length = parser_->content_length();
    const int64_t want = length ? static_cast<int64_t>(*length) : ctx_.options.limits.max_body_bytes;
    const int64_t before = ctx_.inflightBodyBytes.fetch_add(want);
    if (before + want > ctx_.options.limits.max_inflight_body_bytes) {
        ctx_.inflightBodyBytes.fetch_sub(want);
        return false;
    }
    bodyBytes_ = want;
    return true;
}

void HttpConnection::releaseBody() {
    ctx_.inflightBodyBytes.fetch_sub(bodyBytes_);
    bodyBytes_ = 0;
}

void HttpConnection::arm(std::chrono::milliseconds after) {
    const uint64_t generation = ++timerGeneration_;
    timer_.expires_after(after);
    timer_.async_wait([self = self<HttpConnection>(), generation](error_code ec) {
        if (ec || generation != self->timerGeneration_ || self->closed()) return;
        ++self->ctx_.metrics.connectionsTimedOut;
        self->close();
    });
}

void HttpConnection::disarm() {
    ++timerGeneration_;
    timer_.cancel();
}

void HttpConnection::onHelloTimeout() {
    ++ctx_.metrics.connectionsTimedOut;
    close();
}

void HttpConnection::onSent() {
    if (interim_) {  // the "100 Continue" went out; the body's deadline still runs
        interim_ = false;
        return;
    }
    disarm();
    readRequest();
}

void HttpConnection::onClosed() {
    disarm();
    releaseBody();
    --ctx_.metrics.connectionsOpen;
}

}  // namespace trainbench::engine::serving
