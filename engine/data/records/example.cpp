#include "engine/data/records/example.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cstring>

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

void decodeExample(const uint8_t* data, size_t size, size_t expected_size, Sample& out, const std::string& where) {
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

    if (out.x.size() != pixels) out.x.resize(pixels);
    if (image.kind == FeatureKind::kBytes) {
        // The Batcher's kernel and scale (1/255), so IDX and TFRecord sources give identical floats.
        kernels::scaleBytes(image.bytes.data(), out.x.data(), pixels, 1.0f / 255.0f);
    } else {
        reader.copyFloats(image, out.x.data());
    }
    out.label = static_cast<int32_t>(label.last);
    // The shape, when the writer stored it (convert does); anything else means "not stored".
    auto dim = [&](size_t i) -> int64_t {
        const FeatureValues v = reader.feature(i);
        return v.kind == FeatureKind::kInt64 && v.count == 1 && v.last > 0 ? v.last : 0;
    };
    out.channels = dim(2);
    out.height = dim(3);
    out.width = dim(4);
}

}  // namespace trainbench::engine
