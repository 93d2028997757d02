#include "testpredictserver.h"

#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

namespace trainbench::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct TestPredictServer::State {
    TestPredictServerOptions options;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    std::atomic<int64_t> busyNs{0}, served{0};
    int64_t seen = 0;  // io thread only
    bool droppedFirst = false;  // io thread only
    std::string prediction;  // one instance's answer
    std::thread thread;

    struct Session : std::enable_shared_from_this<Session> {
        Session(State& s, tcp::socket socket) : state(s), stream(std::move(socket)) {}
        State& state;
        beast::tcp_stream stream;
        beast::flat_buffer buffer;
        http::request<http::string_body> request;
        http::response<http::string_body> response;

        void read() {
            request = {};
            http::async_read(stream, buffer, request, [self = shared_from_this()](beast::error_code ec, size_t) {
                if (!ec) self->answer();
            });
        }
        void answer() {
            State& s = state;
            // The service time is spent on the server's only thread: everything else waits.
            auto busy = s.options.serviceTime;
            if (++s.seen == s.options.stallOnRequest) busy += s.options.stallFor;
            const auto begin = std::chrono::steady_clock::now();
            if (busy.count() > 0) std::this_thread::sleep_for(busy);
            s.busyNs += (std::chrono::steady_clock::now() - begin).count();
            ++s.served;
            const auto doc = nlohmann::json::parse(request.body(), nullptr, false);
            const size_t instances = doc.is_object() && doc.contains("instances") ? doc["instances"].size() : 0;
            response = {};
            response.version(11);
            response.result(instances ? http::status::ok : http::status::bad_request);
            response.set(http::field::content_type, "application/json");
            if (s.options.timingHeader)
                response.set("X-Trainbench-Timing", "queue_us=0,batch_us=0,compute_us=" +
                                                        std::to_string(s.options.serviceTime.count()) +
                                                        ",decode_us=0,encode_us=0,batch=" + std::to_string(instances));
            std::string body = "{\"predictions\": [";
            for (size_t i = 0; i < instances; ++i) body += (i ? "," : "") + s.prediction;
            response.body() = instances ? body + "]}" : "{\"error\": \"no instances\"}";
            response.keep_alive(request.keep_alive());
            response.prepare_payload();
            http::async_write(stream, response, [self = shared_from_this()](beast::error_code ec, size_t) {
                if (self->state.options.dropAfterEachAnswer) return self->stream.close();
                if (!ec) self->read();
            });
        }
    };

    void accept() {
        acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
            if (ec) return;
            if (options.dropFirstConnection && !droppedFirst) {
                droppedFirst = true;
                socket.close();
                return accept();
            }
            std::make_shared<Session>(*this, std::move(socket))->read();
            accept();
        });
    }
};

TestPredictServer::TestPredictServer(TestPredictServerOptions options) : state_(std::make_unique<State>()) {
    state_->options = options;
    state_->prediction = "[";
    for (int i = 0; i < options.predictionFloats; ++i) state_->prediction += (i ? "," : "") + std::string("0.123456");
    state_->prediction += "]";
    const tcp::endpoint loopback(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(loopback.protocol());
    state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    state_->acceptor.bind(loopback);
    state_->acceptor.listen();
    state_->accept();
    state_->thread = std::thread([s = state_.get()] { s->io.run(); });
}

TestPredictServer::~TestPredictServer() {
    state_->io.stop();
    state_->thread.join();
}

uint16_t TestPredictServer::port() const { return state_->acceptor.local_endpoint().port(); }
// Counted before the answer is written, so a client holding its answer always finds it counted.
int64_t TestPredictServer::requests() const { return state_->served.load(); }

std::chrono::microseconds TestPredictServer::meanServiceTime() const {
    const int64_t n = state_->served.load();
    return std::chrono::microseconds(n ? state_->busyNs.load() / n / 1000 : 0);
}

}  // namespace trainbench::testing
