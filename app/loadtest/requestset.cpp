#include "app/loadtest/requestset.h"

#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/beast/http.hpp>

#include <charconv>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "engine/data/idxreader.h"
#include "engine/util/errors.h"
#include "engine/util/rng.h"

namespace trainbench::app::loadtest {

namespace http = boost::beast::http;

ExampleSet loadIdxExamples(const std::string& path, int64_t limit, float scale) {
    const engine::IdxArray idx = engine::readIdx(path);
    if (idx.type != engine::kIdxU8 || idx.dims.size() < 2)
        throw engine::DataError(path + ": expected u8 images (N x ...), found " + engine::idxTypeName(idx.type) + " " +
                                engine::idxDimsString(idx.dims));
    ExampleSet set;
    set.source = path;
    set.exampleSize = 1;
    for (size_t d = 1; d < idx.dims.size(); ++d) set.exampleSize *= idx.dims[d];
    set.count = limit > 0 ? std::min(limit, idx.dims[0]) : idx.dims[0];
    set.values.resize(static_cast<size_t>(set.count * set.exampleSize));
    for (size_t i = 0; i < set.values.size(); ++i) set.values[i] = static_cast<float>(idx.data[i]) * scale;
    set.shape.assign(idx.dims.begin() + 1, idx.dims.end());
    return set;
}

std::string checkExampleShape(const std::vector<int64_t>& shape, int64_t exampleSize) {
    if (shape.empty()) return {};
    int64_t product = 1;
    std::string text;
    for (int64_t d : shape) {
        if (d < 1) return "the example shape has a dimension of " + std::to_string(d) + "; each must be at least 1";
        product *= d;
        text += (text.empty() ? "" : "x") + std::to_string(d);
    }
    if (product != exampleSize)
        return "the example shape " + text + " holds " + std::to_string(product) + " numbers; the examples have " +
               std::to_string(exampleSize);
    return {};
}

namespace {

// x's numbers as nested lists of `shape` from dimension `dim` on; returns past the last number used.
const float* appendNested(std::string& body, const float* x, const std::vector<int64_t>& shape, size_t dim,
                          int64_t flatSize) {
    char number[32];
    const int64_t n = dim < shape.size() ? shape[dim] : flatSize;
    const bool innermost = dim + 1 >= shape.size();
    body += '[';
    for (int64_t j = 0; j < n; ++j) {
        if (j) body += ',';
        if (innermost) {
            const auto end = std::to_chars(number, number + sizeof number, *x++).ptr;
            body.append(number, end);
        } else {
            x = appendNested(body, x, shape, dim + 1, flatSize);
        }
    }
    body += ']';
    return x;
}

// {"instances": [EXAMPLE, ...]}, each example nested as examples.shape says, each float in its
// shortest exact form.
std::string instancesJson(const ExampleSet& examples, int64_t first, int instances) {
    std::string body = "{\"instances\": [";
    for (int k = 0; k < instances; ++k) {
        const int64_t example = (first + k) % examples.count;
        const float* x = examples.values.data() + example * examples.exampleSize;
        if (k) body += ", ";
        appendNested(body, x, examples.shape, 0, examples.exampleSize);
    }
    body += "]}";
    return body;
}

}  // namespace

RequestSet::RequestSet(const ExampleSet& examples, const PredictTarget& target, int instancesPerQuery,
                       int64_t samples, uint64_t seed)
    : instances_(instancesPerQuery), path_("/v1/models/" + target.model + ":predict") {
    if (examples.count <= 0 || examples.exampleSize <= 0)
        throw std::invalid_argument("no examples to send (" + examples.source + ")");
    if (instancesPerQuery <= 0 || samples <= 0)
        throw std::invalid_argument("instances per query and samples must be positive");
    for (int64_t s = 0; s < samples; ++s) {
        http::request<http::string_body> req{http::verb::post, path_, 11};
        req.set(http::field::host, target.host + ":" + std::to_string(target.port));
        req.set(http::field::content_type, "application/json");
        if (!target.bearerToken.empty()) req.set(http::field::authorization, "Bearer " + target.bearerToken);
        req.body() = instancesJson(examples, s * instancesPerQuery, instancesPerQuery);
        req.prepare_payload();
        std::ostringstream bytes;
        bytes << req;
        requests_.push_back(bytes.str());
    }
    order_.resize(static_cast<size_t>(samples));
    std::iota(order_.begin(), order_.end(), 0u);
    engine::Rng rng(seed);
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
}

}  // namespace trainbench::app::loadtest
