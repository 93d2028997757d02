#pragma once
// A small real TensorFlow Serving-like predict server for the load generator's tests: Boost.Beast
// on one io thread of its own, listening on loopback, answering each request after a known service
// time spent on that thread (so requests queue behind each other, as on a single-worker server),
// optionally stalling once, optionally with large answers and the X-Trainbench-Timing header.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace trainbench::testing {

struct TestPredictServerOptions {
    std::chrono::microseconds serviceTime{0};
    int64_t stallOnRequest = 0;              // the n-th request (1-based) takes stallFor more; 0: never
    std::chrono::milliseconds stallFor{0};
    int predictionFloats = 10;               // numbers per prediction: large answers cost the client to check
    bool timingHeader = false;               // X-Trainbench-Timing with compute_us = the service time
    // Closes each connection after its answer without saying so (no "Connection: close"), as a
    // server does whose keep-alive timeout struck between two requests.
    bool dropAfterEachAnswer = false;
    // Closes the first connection as soon as it is accepted, before any request (an idle timeout).
    bool dropFirstConnection = false;
};

class TestPredictServer {
public:
    explicit TestPredictServer(TestPredictServerOptions options);
    ~TestPredictServer();  // stops the io thread, closes every connection
    uint16_t port() const;
    int64_t requests() const;  // answered so far (counted as each answer starts on the wire)
    // The mean time a request really took on the server's thread (a loaded machine oversleeps).
    std::chrono::microseconds meanServiceTime() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace trainbench::testing
