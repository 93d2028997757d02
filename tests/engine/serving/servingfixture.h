#pragma once
// A ServingServer on a loopback port with the test's dense servable, for the HTTP tests.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/serving/servingserver.h"
#include "tests/engine/serving/denseservable.h"
#include "tests/engine/serving/httpclient.h"

namespace trainbench::engine::serving::test {

inline ServingOptions smallOptions() {
    ServingOptions o;
    o.batching.max_batch_size = 8;
    o.batching.num_batch_threads = 1;
    o.request_threads = 2;
    o.limits.max_body_bytes = 1 << 20;
    return o;
}

// "[[a,b,c,d], ...]" of the given examples.
inline std::string instancesJson(const std::vector<float>& x, int64_t inputs) {
    std::string s = "{\"instances\": [";
    for (size_t e = 0; e < x.size() / inputs; ++e) {
        s += e ? ",[" : "[";
        for (int64_t i = 0; i < inputs; ++i) s += (i ? "," : "") + std::to_string(x[e * inputs + i]);
        s += "]";
    }
    return s + "]}";
}

// Checks a 200 answer's predictions against the dense layer computed independently.
inline void expectPredictions(const HttpReply& reply, const std::vector<float>& x, int64_t inputs = 4, int64_t outputs = 3) {
    ASSERT_EQ(reply.status, 200) << reply.error << reply.body;
    const auto doc = nlohmann::json::parse(reply.body);
    const std::vector<double> want = expectedDense(x, inputs, outputs);
    ASSERT_EQ(doc["predictions"].size() * outputs, want.size()) << reply.body;
    for (size_t e = 0; e < doc["predictions"].size(); ++e)
        for (int64_t j = 0; j < outputs; ++j)
            EXPECT_NEAR(doc["predictions"][e][j].get<double>(), want[e * outputs + j], 1e-5) << reply.body;
}

}  // namespace trainbench::engine::serving::test
