#pragma once
// What decodeExample must return for some bytes, worked out the slow, obvious way: parse with the
// protobuf-generated classes, look the features up in the map. Shared by the unit tests and the
// fuzz target (tests/fuzz/fuzz_example.cpp).
#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/records/example.pb.h"

namespace trainbench::engine::oracle {

struct Decoded {
    bool ok = false;
    std::vector<float> x;
    int32_t label = 0;
};

inline Decoded decodeWithProtobuf(const uint8_t* data, size_t size, size_t expected_size) {
    Decoded d;
    ::trainbench::proto::Example example;
    {
        google::protobuf::LogSilencer quiet;  // invalid UTF-8 is logged as an error, then refused
        if (size > INT_MAX || !example.ParseFromArray(data, static_cast<int>(size))) return d;
    }
    const auto& features = example.features().feature();
    const auto image = features.find("image");
    const auto label = features.find("label");
    if (image == features.end() || label == features.end()) return d;
    const ::trainbench::proto::Feature& f = image->second;
    if (f.has_bytes_list()) {
        if (f.bytes_list().value_size() != 1) return d;
        const std::string& px = f.bytes_list().value(0);
        for (unsigned char c : px) d.x.push_back(static_cast<float>(c) * (1.0f / 255.0f));
    } else if (f.has_float_list()) {
        d.x.assign(f.float_list().value().begin(), f.float_list().value().end());
    } else {
        return d;
    }
    if (expected_size > 0 && d.x.size() != expected_size) return d;
    if (!label->second.has_int64_list() || label->second.int64_list().value_size() != 1) return d;
    const int64_t v = label->second.int64_list().value(0);
    if (v < 0 || v > INT32_MAX) return d;
    d.label = static_cast<int32_t>(v);
    d.ok = true;
    return d;
}

}  // namespace trainbench::engine::oracle
