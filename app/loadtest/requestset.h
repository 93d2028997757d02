#pragma once
// The requests a load test sends: examples (e.g. Fashion-MNIST test images through engine/data's
// IDX reader) turned into TensorFlow Serving predict calls, each built once — headers and JSON
// body as bytes — so that sending a query costs the client a write and nothing else.
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::app::loadtest {

struct ExampleSet {
    std::vector<float> values;  // count × exampleSize, one example after another
    int64_t exampleSize = 0;
    int64_t count = 0;
    std::string source;         // for messages: the file it came from
    // How an example nests in the request's JSON, e.g. {1, 28, 28}: a list of 1 list of 28 lists of
    // 28 numbers, as the server's input shape says. Empty: a flat list of exampleSize numbers.
    std::vector<int64_t> shape;
};

// The first `limit` examples (0: all) of an IDX file of u8 images (N × …), each byte times `scale`
// (1: pixels as stored, what trainbench's server takes; 1/255: as the training pipeline scales them).
// `shape` is the IDX's dimensions after N. Throws engine::DataError naming the file for anything else.
ExampleSet loadIdxExamples(const std::string& path, int64_t limit, float scale = 1.0f);

// "" if `shape` can nest examples of `exampleSize` numbers (its product), else what is wrong.
std::string checkExampleShape(const std::vector<int64_t>& shape, int64_t exampleSize);

struct PredictTarget {
    std::string host = "127.0.0.1";
    uint16_t port = 8501;  // TensorFlow Serving's REST port
    std::string model = "default";
    std::string bearerToken;  // sent as "Authorization: Bearer TOKEN" when not empty
};

// Query i uses sample order[i % samples]: `samples` requests of `instancesPerQuery` examples each,
// taken in turn from the set; the order is a seeded shuffle, as LoadGen's sample index seed makes it.
class RequestSet {
public:
    // Throws std::invalid_argument when `examples` is empty or a count is not positive.
    RequestSet(const ExampleSet& examples, const PredictTarget& target, int instancesPerQuery, int64_t samples,
               uint64_t seed);

    const std::string& request(int64_t query) const {
        return requests_[order_[static_cast<size_t>(query) % order_.size()]];
    }
    int instancesPerQuery() const { return instances_; }
    const std::string& path() const { return path_; }

private:
    std::vector<std::string> requests_;
    std::vector<uint32_t> order_;
    int instances_ = 1;
    std::string path_;
};

}  // namespace trainbench::app::loadtest
