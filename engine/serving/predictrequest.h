#pragma once
// The body of TensorFlow Serving's REST predict call, decoded straight into floats: row format
// {"instances": [example, ...]} (an example is the tensor itself or {"INPUT_NAME": tensor}) or
// columnar {"inputs": [example, ...]} / {"inputs": {"INPUT_NAME": [...]}}, with an optional
// "signature_name": "serving_default". Decoded with nlohmann's SAX parser, so no document is built:
// the memory is the floats themselves, the examples are counted as they come and refused past
// `maxInstances`, every example's shape is checked against the servable's as it is read, and
// nothing nests deeper than the expected shape. A failure names the field and what was expected
// ("instances[3]: expected 784 numbers, got 783") or, for malformed JSON, the byte offset.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/serving/servable.h"

namespace trainbench::engine::serving {

struct PredictRequest {
    enum class Format { Row, Columnar };
    Format format = Format::Row;  // the answer is {"predictions": ...} for Row, {"outputs": ...} for Columnar
    std::vector<float> data;      // size × servable.exampleSize()
    int64_t size = 0;             // examples
};

// "" and `out` filled, or what is wrong with `body` (the caller answers 400 with it).
std::string decodePredictRequest(std::string_view body, const Servable& servable, int64_t maxInstances,
                                 PredictRequest& out);

}  // namespace trainbench::engine::serving
