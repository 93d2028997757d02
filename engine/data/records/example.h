#pragma once
// tf.train.Example payloads, as TensorFlow writes them: features "image" (bytes_list with one
// u8-pixel string, or float_list), "label" (int64_list with one value), and optionally "height",
// "width", "channels" (int64_list). Encoded and decoded with protobuf (records/example.proto, written
// for this project with TensorFlow's field numbers).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/data/pipeline/element.h"

namespace trainbench::engine {

struct ImageShape {
    int64_t channels = 0, height = 0, width = 0;  // 0 = not stored
};

// Serializes one example with u8 pixels (bytes_list) or float pixels (float_list).
std::string encodeExample(const uint8_t* pixels, size_t count, int64_t label, const ImageShape& shape = {});
std::string encodeExampleFloat(const float* values, size_t count, int64_t label, const ImageShape& shape = {});
// A prediction as a tf.train.Example (trainbench-cli predict --out FILE.tfrecord): int64 "index" (the
// example's position in the input), int64 "prediction" (the top class), float "scores" (one
// probability per class) and, when the input had one, int64 "label".
std::string encodePrediction(int64_t index, int64_t prediction, const float* scores, size_t classes,
                             std::optional<int64_t> label);

// Decodes a serialized Example into `out` (reusing its capacity): u8 pixels are scaled by 1/255,
// float pixels copied. `expected_size` > 0 checks the feature count. Throws DataError with `where`
// ("file: record at byte offset N") and what is wrong: not a valid Example, "image" or "label"
// missing or of the wrong kind, a size that is not expected_size, a label outside [0, 2^31).
// Reads the wire format directly (no map is built) and accepts exactly what protobuf's parser
// accepts, with its rules: features in any order, packed or unpacked lists, unknown fields skipped,
// the last entry of a repeated feature name wins. out.channels/height/width get the "channels",
// "height", "width" features when each is one positive int64, 0 otherwise.
void decodeExample(const uint8_t* data, size_t size, size_t expected_size, Sample& out, const std::string& where);
// The same, writing the features straight to dst (expected_size > 0 floats, e.g. a row of a batch)
// and the label to `label`; the shape features are not read.
void decodeExample(const uint8_t* data, size_t size, size_t expected_size, float* dst, int32_t& label,
                   const std::string& where);

}  // namespace trainbench::engine
