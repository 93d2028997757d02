#include "engine/data/records/example.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cstring>
#include <stdexcept>

#include "engine/data/records/example.pb.h"
#include "engine/data/records/examplewirereader.h"
#include "engine/util/errors.h"
#include "engine/util/vectorkernels.h"

namespace trainbench::engine {
namespace {

namespace pb = ::trainbench::proto;

using FeatureMap = google::protobuf::Map<std::string, pb::Feature>;

void addShape(FeatureMap& features, const ImageShape& shape) {
    if (shape.height > 0) features["height"].mutable_int64_list()->add_value(shape.height);
    if (shape.width > 0) features["width"].mutable_int64_list()->add_value(shape.width);
    if (shape.channels > 0) features["channels"].mutable_int64_list()->add_value(shape.channels);
}

// Deterministic: map entries sorted by key, so one example always gives the same bytes (and files
// written twice compare equal).
std::string serialize(const pb::Example& example) {
    std::string out;
    {
        google::protobuf::io::StringOutputStream stream(&out);
        google::protobuf::io::CodedOutputStream coded(&stream);
        coded.SetSerializationDeterministic(true);
        example.SerializeToCodedStream(&coded);
    }
    return out;
}

}  // namespace

std::string encodeExample(const uint8_t* pixels, size_t count, int64_t label, const ImageShape& shape) {
    pb::Example example;
    FeatureMap& features = *example.mutable_features()->mutable_feature();
    features["image"].mutable_bytes_list()->add_value(count > 0 ? pixels : nullptr, count);
    features["label"].mutable_int64_list()->add_value(label);
    addShape(features, shape);
    return serialize(example);
}

std::string encodeExampleFloat(const float* values, size_t count, int64_t label, const ImageShape& shape) {
    pb::Example example;
    FeatureMap& features = *example.mutable_features()->mutable_feature();
    features["image"].mutable_float_list()->mutable_value()->Add(values, values + count);
    features["label"].mutable_int64_list()->add_value(label);
    addShape(features, shape);
    return serialize(example);
}

std::string encodePrediction(int64_t index, int64_t prediction, const float* scores, size_t classes,
                             std::optional<int64_t> label) {
    pb::Example example;
    FeatureMap& features = *example.mutable_features()->mutable_feature();
    features["index"].mutable_int64_list()->add_value(index);
    features["prediction"].mutable_int64_list()->add_value(prediction);
    features["scores"].mutable_float_list()->mutable_value()->Add(scores, scores + classes);
    if (label) features["label"].mutable_int64_list()->add_value(*label);
    return serialize(example);
}

namespace {

// The checks and the walk shared by both decodeExample forms; `destination(pixels)` returns where
// the pixels go once their count is known and valid.
template <class Destination>
void decodeInto(const uint8_t* data, size_t size, size_t expected_size, const std::string& where, int32_t& labelOut,
                int64_t* shape, Destination&& destination) {
    ExampleWireReader reader(data, size, where, {"image", "label", "channels", "height", "width"});
    reader.walk();

    const FeatureValues image = reader.feature(0);
    switch (image.kind) {
        case FeatureKind::kBytes:
            if (image.count != 1)
                throw DataError(where + ": feature 'image' holds " + std::to_string(image.count) +
                                " byte strings; expected 1 (the u8 pixels)");
            break;
        case FeatureKind::kFloat:
            break;
        default:
            throw DataError(where + ": feature 'image' " + describeKind(image.kind) +
                            "; expected a bytes_list (u8 pixels) or a float_list");
    }
    const size_t pixels = image.kind == FeatureKind::kBytes ? image.bytes.size() : image.count;
    if (expected_size > 0 && pixels != expected_size)
        throw DataError(where + ": feature 'image' has " + std::to_string(pixels) + " values; expected " +
                        std::to_string(expected_size));

    const FeatureValues label = reader.feature(1);
    if (label.kind != FeatureKind::kInt64)
        throw DataError(where + ": feature 'label' " + describeKind(label.kind) + "; expected an int64_list");
    if (label.count != 1)
        throw DataError(where + ": feature 'label' holds " + std::to_string(label.count) + " values; expected 1");
    if (label.last < 0 || label.last > INT32_MAX)
        throw DataError(where + ": label " + std::to_string(label.last) + " is outside [0, 2^31)");

    float* dst = destination(pixels);
    if (image.kind == FeatureKind::kBytes) {
        // The Batcher's kernel and scale (1/255), so IDX and TFRecord sources give identical floats.
        kernels::scaleBytes(image.bytes.data(), dst, pixels, 1.0f / 255.0f);
    } else {
        reader.copyFloats(image, dst);
    }
    labelOut = static_cast<int32_t>(label.last);
    if (shape) {
        // The shape, when the writer stored it (convert does); anything else means "not stored".
        for (size_t i = 0; i < 3; ++i) {
            const FeatureValues v = reader.feature(2 + i);
            shape[i] = v.kind == FeatureKind::kInt64 && v.count == 1 && v.last > 0 ? v.last : 0;
        }
    }
}

}  // namespace

void decodeExample(const uint8_t* data, size_t size, size_t expected_size, Sample& out, const std::string& where) {
    int64_t shape[3];
    decodeInto(data, size, expected_size, where, out.label, shape, [&](size_t pixels) {
        if (out.x.size() != pixels) out.x.resize(pixels);
        return out.x.data();
    });
    out.channels = shape[0];
    out.height = shape[1];
    out.width = shape[2];
}

void decodeExample(const uint8_t* data, size_t size, size_t expected_size, float* dst, int32_t& label,
                   const std::string& where) {
    if (expected_size == 0) throw std::invalid_argument("decodeExample into a buffer needs the expected size");
    decodeInto(data, size, expected_size, where, label, nullptr, [&](size_t) { return dst; });
}

}  // namespace trainbench::engine
