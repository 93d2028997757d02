// The requests a load test sends: IDX images read as the training pipeline scales them, and each
// request a complete TensorFlow Serving predict call whose JSON carries the examples exactly.
#include <gtest/gtest.h>

#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/beast/http.hpp>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "app/loadtest/requestset.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::app::loadtest {
namespace {

namespace http = boost::beast::http;

class RequestSetTest : public engine::test::TempDirTest {};

// An IDX u8 file of `n` 2x2 images whose pixel k of image i is 10 * i + k.
std::string idxBytes(int n) {
    std::string b = {0, 0, 0x08, 3, 0, 0, 0, static_cast<char>(n), 0, 0, 0, 2, 0, 0, 0, 2};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 4; ++k) b += static_cast<char>(10 * i + k);
    return b;
}

TEST_F(RequestSetTest, ReadsIdxImagesAsStoredOrScaledWithTheirShape) {
    engine::test::writeText(path("images.idx"), idxBytes(5));
    const ExampleSet set = loadIdxExamples(path("images.idx"), 3);
    EXPECT_EQ(set.count, 3);
    EXPECT_EQ(set.exampleSize, 4);
    ASSERT_EQ(set.values.size(), 12u);
    EXPECT_EQ(set.values[5], 11.0f) << "pixels as stored, what trainbench's server takes";
    EXPECT_EQ(set.shape, (std::vector<int64_t>{2, 2}));
    const ExampleSet scaled = loadIdxExamples(path("images.idx"), 3, 1.0f / 255.0f);
    EXPECT_EQ(scaled.values[5], 11.0f * (1.0f / 255.0f)) << "as the training pipeline scales them";
}

TEST(ExampleShape, MustHoldTheExamplesNumbersExactly) {
    EXPECT_EQ(checkExampleShape({}, 784), "");
    EXPECT_EQ(checkExampleShape({1, 28, 28}, 784), "");
    EXPECT_EQ(checkExampleShape({28, 27}, 784), "the example shape 28x27 holds 756 numbers; the examples have 784");
    EXPECT_NE(checkExampleShape({0, 784}, 784).find("at least 1"), std::string::npos);
}

TEST_F(RequestSetTest, RefusesAnIdxFileThatIsNotImagesNamingIt) {
    std::string labels = {0, 0, 0x08, 1, 0, 0, 0, 2, 1, 2};
    engine::test::writeText(path("labels.idx"), labels);
    const std::string message = engine::test::errorOf([&] { loadIdxExamples(path("labels.idx"), 0); });
    EXPECT_NE(message.find("labels.idx"), std::string::npos) << message;
}

TEST_F(RequestSetTest, EachRequestIsAPredictCallCarryingTheExamplesExactly) {
    engine::test::writeText(path("images.idx"), idxBytes(4));
    ExampleSet set = loadIdxExamples(path("images.idx"), 0, 1.0f / 255.0f);
    set.shape.clear();  // flat lists
    PredictTarget target;
    target.port = 8501;
    target.model = "fashion";
    const RequestSet requests(set, target, /*instancesPerQuery=*/2, /*samples=*/2, /*seed=*/1);
    std::set<float> firstPixels;
    for (int64_t q = 0; q < 2; ++q) {
        http::request_parser<http::string_body> parser;
        boost::beast::error_code ec;
        const std::string& bytes = requests.request(q);
        size_t used = 0;
        while (!parser.is_done() && used < bytes.size()) {  // the header first, then the body
            used += parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
            ASSERT_FALSE(ec) << ec.message();
        }
        ASSERT_TRUE(parser.is_done());
        EXPECT_EQ(used, bytes.size());
        const auto& req = parser.get();
        EXPECT_EQ(req.method(), http::verb::post);
        EXPECT_EQ(req.target(), "/v1/models/fashion:predict");
        EXPECT_TRUE(req.keep_alive());
        const auto doc = nlohmann::json::parse(req.body());
        ASSERT_EQ(doc["instances"].size(), 2u);
        for (const auto& instance : doc["instances"]) {
            ASSERT_EQ(instance.size(), 4u);
            const float first = instance[0].get<float>();
            const int image = static_cast<int>(std::lround(first * 255.0f)) / 10;
            for (int k = 0; k < 4; ++k)  // shortest round-trip text: the same float comes back
                EXPECT_EQ(instance[k].get<float>(), set.values[static_cast<size_t>(image * 4 + k)]);
            firstPixels.insert(first);
        }
    }
    EXPECT_EQ(firstPixels.size(), 4u);  // the two samples hold the four examples
}

TEST_F(RequestSetTest, ExamplesNestAsTheirShapeSays) {
    engine::test::writeText(path("images.idx"), idxBytes(1));
    ExampleSet set = loadIdxExamples(path("images.idx"), 0);
    set.shape = {1, 2, 2};
    const RequestSet requests(set, PredictTarget{}, 1, 1, 0);
    const std::string& bytes = requests.request(0);
    const std::string body = bytes.substr(bytes.find("\r\n\r\n") + 4);
    EXPECT_EQ(body, R"({"instances": [[[[0,1],[2,3]]]]})");
}

}  // namespace
}  // namespace trainbench::app::loadtest
