#pragma once
// Options for a load test against a TestPredictServer on loopback, with small examples.
#include "app/loadtest/loadtestoptions.h"

namespace trainbench::testing {

inline app::loadtest::LoadTestOptions loopbackOptions(uint16_t port) {
    app::loadtest::LoadTestOptions o;
    o.target.host = "127.0.0.1";
    o.target.port = port;
    o.target.model = "m";
    o.examples.exampleSize = 4;
    o.examples.count = 8;
    o.examples.source = "test examples";
    for (int i = 0; i < 32; ++i) o.examples.values.push_back(static_cast<float>(i) / 32.0f);
    o.samples = 8;
    o.minQueryCount = 20;
    o.minDuration = std::chrono::milliseconds(500);
    o.maxDuration = std::chrono::seconds(60);
    return o;
}

}  // namespace trainbench::testing
