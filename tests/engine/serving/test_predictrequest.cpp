// The predict body's decoder: both of TF Serving's formats, nested example shapes, and a message
// that names the field and what it expected for every way a body can be wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "engine/serving/predictrequest.h"
#include "tests/engine/serving/denseservable.h"

namespace trainbench::engine::serving {
namespace {

std::string decode(const std::string& body, PredictRequest& out, std::vector<int64_t> shape = {4}, int64_t max = 8) {
    return decodePredictRequest(body, test::denseServable(std::move(shape)), max, out);
}

TEST(PredictRequest, RowAndColumnarFormatsDecodeToTheSameFloats) {
    const std::vector<float> expected = {1, 2, 3, 4, 0.5f, -1e-3f, 7, 8};
    for (const std::string body : {R"({"instances": [[1,2,3,4],[0.5,-1e-3,7,8]]})",
                                   R"({"signature_name": "serving_default", "instances": [{"input": [1,2,3,4]}, {"input": [0.5,-1e-3,7,8]}]})",
                                   R"({"inputs": [[1,2,3,4],[0.5,-1e-3,7,8]]})",
                                   R"({"inputs": {"input": [[1,2,3,4],[0.5,-1e-3,7,8]]}})"}) {
        PredictRequest r;
        ASSERT_EQ(decode(body, r), "") << body;
        EXPECT_EQ(r.size, 2) << body;
        EXPECT_EQ(r.data, expected) << body;
        EXPECT_EQ(r.format, body.find("inputs") != std::string::npos ? PredictRequest::Format::Columnar
                                                                     : PredictRequest::Format::Row);
    }
}

// The common body takes a fast path (straight from text to floats); a body the fast path leaves to
// the full decoder (here: the same body with "signature_name" after the instances) must give the
// same floats bit for bit, whatever form the numbers take.
TEST(PredictRequest, TheFastPathReadsEveryNumberAsTheFullDecoderDoes) {
    std::vector<std::string> numbers = {"0", "-0", "0.0", "-0.0", "1", "-1", "255", "1e3", "1E-3", "-2.5e+2",
                                        "0.1", "3.4028234663852886e38", "-3.4028234e38", "1e-45", "1.4e-45", "7e-46",
                                        "1.17549435e-38", "123456789012345678901234567890", "9007199254740993",
                                        "-9223372036854775809", "18446744073709551615", "0.30000000000000004",
                                        "16777217", "1.00000005960464477539", "2.5000000000000001e-1"};
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {  // random decimals, as a client's float formatter writes them
        char text[64];
        const double v = std::ldexp(static_cast<double>(rng() >> 11) / 9007199254740992.0, static_cast<int>(rng() % 200) - 100);
        std::snprintf(text, sizeof text, i % 2 ? "%.9g" : "%.17g", i % 3 ? v : -v);
        numbers.push_back(text);
    }
    for (size_t at = 0; at + 4 <= numbers.size(); at += 4) {
        const std::string instance = "[" + numbers[at] + ", " + numbers[at + 1] + ",\n " + numbers[at + 2] + "," +
                                     numbers[at + 3] + "]";
        const std::string fast = "{\"instances\": [" + instance + "]}";
        const std::string full = "{\"instances\": [" + instance + "], \"signature_name\": \"serving_default\"}";
        PredictRequest a, b;
        ASSERT_EQ(decode(fast, a), "") << fast;
        ASSERT_EQ(decode(full, b), "") << full;
        ASSERT_EQ(a.data.size(), 4u);
        ASSERT_EQ(b.data.size(), 4u);
        EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), 4 * sizeof(float)), 0) << instance;
        EXPECT_EQ(a.size, 1);
    }
}

// A body cut off anywhere (a client that stops sending, a truncated proxy write) is refused with a
// message, never taken as fewer examples or fewer numbers.
TEST(PredictRequest, EveryTruncationOfAGoodBodyIsRefused) {
    const std::string body = R"({"instances": [[1, 2.5, -3e2, 4], [0.25, 6, 7, 8]]})";
    PredictRequest r;
    ASSERT_EQ(decode(body, r), "");
    for (size_t n = 0; n < body.size(); ++n) {
        PredictRequest cut;
        EXPECT_NE(decode(body.substr(0, n), cut), "") << "accepted the first " << n << " bytes";
    }
}

TEST(PredictRequest, WhatTheFastPathLeavesIsStillRefusedByName) {
    PredictRequest r;
    EXPECT_NE(decode(R"({"instances": [[1,2,3,01]]})", r), "") << "a leading zero is not JSON";
    EXPECT_NE(decode(R"({"instances": [[1,2,3,1.]]})", r), "");
    EXPECT_NE(decode(R"({"instances": [[1,2,3,+1]]})", r), "");
    EXPECT_NE(decode(R"({"instances": [[1,2,3,inf]]})", r), "");
    EXPECT_NE(decode(R"({"instances": [[1,2,3,0x10]]})", r), "");
    EXPECT_EQ(decode(R"({"instances": [[1,2,3,1e39]]})", r), "instances[0][3]: 1e39 is outside the float range");
    EXPECT_EQ(decode(R"({"instances": [[1,2,3]]})", r), "instances[0]: expected 4 numbers, got 3");
    EXPECT_NE(decode(R"({"instances": [[1,2,3,4]]} x)", r), "") << "trailing bytes";
    EXPECT_NE(decode(R"({"instances": [[1,2,3,4]]})", r, {4}, 0), "") << "more instances than allowed";
}

TEST(PredictRequest, NestedExampleShapesAreCheckedLevelByLevel) {
    PredictRequest r;
    ASSERT_EQ(decode(R"({"instances": [[[1,2,3],[4,5,6]]]})", r, {2, 3}), "");
    EXPECT_EQ(r.data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(decode(R"({"instances": [[[1,2,3],[4,5]]]})", r, {2, 3}), "instances[0][1]: expected 3 numbers, got 2");
    EXPECT_EQ(decode(R"({"instances": [[[1,2,3]]]})", r, {2, 3}), "instances[0]: expected 2 lists, got 1");
    EXPECT_EQ(decode(R"({"instances": [[1,2,3,4,5,6]]})", r, {2, 3}), "instances[0][0]: expected a list of 3 numbers, got a number");
}

TEST(PredictRequest, EveryWrongBodyIsNamedWhereItIsWrong) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"instances": [[1,2,3,4],[1,2,3]]})", "instances[1]: expected 4 numbers, got 3"},
        {R"({"instances": [[1,2,3,4,5]]})", "instances[0]: expected 4 numbers, got more"},
        {R"({"instances": [[1,2,"3",4]]})", "instances[0][2]: expected a number, got a string"},
        {R"({"instances": [[1,2,null,4]]})", "instances[0][2]: expected a number, got null"},
        {R"({"instances": [[1,2,[3],4]]})", "instances[0][2]: expected a number, got a list"},
        {R"({"instances": [1,2]})", "instances[0]: expected a list of 4 numbers, got a number"},
        {R"({"instances": {"a": 1}})", "instances: expected a list of instances, got an object"},
        {R"({"instances": []})", "instances: expected at least one instance, got none"},
        {R"({"instances": [[1,2,3,1e39]]})", "instances[0][3]: 1e39 is outside the float range"},
        {R"({"instances": [{"x": [1,2,3,4]}]})", "instances[0]: unexpected key \"x\", expected only \"input\" (the model's input)"},
        {R"({"instances": [{}]})", "instances[0]: expected {\"input\": ...}, got {}"},
        {R"({"instance": [[1,2,3,4]]})", "unknown key \"instance\": expected \"instances\" or \"inputs\" (and optionally \"signature_name\")"},
        {R"({"signature_name": "other", "instances": [[1,2,3,4]]})", "signature_name: the model has no signature \"other\", only \"serving_default\""},
        {R"({"signature_name": 3})", "signature_name: expected a string, got a number"},
        {R"({})", "expected \"instances\" (row format) or \"inputs\" (columnar format), got neither"},
        {R"([1])", "expected a JSON object with \"instances\" or \"inputs\", got a list"},
        {R"({"instances": [[1,2,3,4]], "inputs": [[1,2,3,4]]})", "\"inputs\": the body already holds instances; expected only one of them"},
        {"", "the body is empty; expected {\"instances\": [...]} or {\"inputs\": ...}"},
    };
    for (const auto& [body, message] : cases) {
        PredictRequest r;
        EXPECT_EQ(decode(body, r), message) << body;
    }
}

TEST(PredictRequest, MalformedJsonIsLocatedByByteOffset) {
    PredictRequest r;
    const std::string e = decode("{\"instances\": [[1,2,3,4],\n [1,2,,4]]}", r);
    EXPECT_EQ(e.rfind("malformed JSON at byte 32 (line 2, column 7): ", 0), 0u) << e;
}

TEST(PredictRequest, InstancesPastTheCapAreRefusedAsTheyCome) {
    std::string body = R"({"instances": [)";
    for (int i = 0; i < 100000; ++i) body += "[1,2,3,4],";
    body += "[1,2,3,4]]}";
    PredictRequest r;
    EXPECT_EQ(decode(body, r, {4}, 8), "instances: more than 8 instances, the most one request may hold (max_batch_size)");
    EXPECT_LE(r.data.capacity(), 64u) << "stopped at the cap: no more than 8 examples' floats were kept";
}

}  // namespace
}  // namespace trainbench::engine::serving
