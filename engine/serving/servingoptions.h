#pragma once
// How an inference server is set up: where it listens, how it batches, how many model instances
// run, the caps it puts on every client, and an optional bearer token. The defaults are
// docs/serving.md's; the CLI maps its flags onto these fields one to one.
#include <chrono>
#include <cstdint>
#include <string>

#include "engine/serving/batchingparameters.h"

namespace trainbench::engine::serving {

struct ServingLimits {
    int64_t max_body_bytes = 32 << 20;   // a longer body is answered 413 before it is read
    // Body bytes of all requests being read or answered at once (a chunked body counts as
    // max_body_bytes): a request whose body would pass it is answered 503 before it is read, so
    // many clients sending large bodies at once cannot take the server's memory.
    int64_t max_inflight_body_bytes = 512 << 20;
    int64_t max_header_bytes = 16 << 10;  // the request line and headers; more: 431
    // Connections open at once. One over it is closed at once; of those still waiting for their
    // first request's header, the longest idle (≥ 1 s) is closed to make room for a newcomer.
    // Lowered at start to what the descriptor limit allows (docs/serving.md).
    int64_t max_connections = 16384;
    std::chrono::milliseconds header_timeout{10000};     // from connect (or a request's first byte) to its full header
    std::chrono::milliseconds body_timeout{30000};       // from the header to the full body
    std::chrono::milliseconds write_timeout{30000};      // to write one response
    std::chrono::milliseconds keepalive_timeout{30000};  // idle between requests on a kept-alive connection

    // "" if usable, else what is wrong.
    std::string validate() const;
};

struct ServingOptions {
    std::string bind_address = "127.0.0.1";  // loopback unless told otherwise
    uint16_t port = 0;                       // 0: any free port (ServingServer::port() says which)
    BatchingParameters batching;
    // Model instances (replicas), each used by one batch thread at a time; 0: one per batch thread.
    // At most num_batch_threads (a thread without an instance waits for one).
    int64_t instances = 0;
    // Threads that decode request bodies and encode answers (JSON); 0: the number of cores.
    int64_t request_threads = 0;
    ServingLimits limits;
    // If set, every request must carry "Authorization: Bearer <token>" (else 401).
    std::string auth_token;
};

}  // namespace trainbench::engine::serving
