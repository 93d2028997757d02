#pragma once
// The inference server: TensorFlow Serving's REST API over HTTP/1.1 for one servable, with
// dynamic batching (batchscheduler.h), request threads for JSON, Prometheus metrics, and caps and
// deadlines on every client (docs/serving.md). Built on the engine's one Asio scaffold
// (engine/net/asioserver.h); this header keeps Asio out.
//
//   ServingServer server(servable, options);  // checks the options, makes the instances
//   server.start();                           // listens; port() says where
//   ...
//   server.stop();                            // answers or refuses what is in flight, joins every thread
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/serving/servable.h"
#include "engine/serving/servingmetrics.h"
#include "engine/serving/servingoptions.h"

namespace trainbench::engine::serving {

class ServingServer {
public:
    // Throws std::invalid_argument naming the option that is wrong, and whatever the servable's
    // instance factory throws.
    ServingServer(Servable servable, ServingOptions options);
    ~ServingServer();  // stop()
    ServingServer(const ServingServer&) = delete;
    ServingServer& operator=(const ServingServer&) = delete;

    // Raises the descriptor limit, listens and serves. Throws std::runtime_error
    // ("cannot listen on 127.0.0.1:8501: Address already in use").
    void start();
    // Stops taking requests, answers those in flight (503 for those not yet run), joins every thread
    // and closes every connection. Idempotent.
    void stop();

    uint16_t port() const;
    std::string address() const;                 // host:port
    const ServingOptions& options() const;       // resolved: threads, instances and max_connections as used
    // What start() adjusted ("max_connections lowered to ...") and connection refusals (at most one a second).
    std::vector<std::string> notes() const;
    const ServingMetrics& metrics() const;
    std::string metricsText() const;  // what GET /metrics answers
    int64_t enqueuedBatches() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainbench::engine::serving
