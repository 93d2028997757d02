// decodeExample on arbitrary bytes, against protobuf's generated parser: it must succeed exactly
// when protobuf parses the bytes and finds a valid "image" and "label" in them, and then give the
// same floats and label; a refusal must be a DataError. Once more with expected_size set to the
// image size, and to one more than that.
#include <cstring>
#include <string>

#include "../engine/exampleoracle.h"
#include "engine/data/records/example.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::mismatch;

namespace {

void check(const uint8_t* data, size_t size, size_t expected) {
    const oracle::Decoded want = oracle::decodeWithProtobuf(data, size, expected);
    Sample got;
    got.x.assign(3, 1.0f);  // decodeExample must not depend on what was there before
    std::string error;
    try {
        decodeExample(data, size, expected, got, "fuzz");
    } catch (const DataError& e) {
        error = e.what();
    }
    const std::string where = "expected_size " + std::to_string(expected) + ": ";
    if (want.ok != error.empty())
        mismatch(where + (want.ok ? "protobuf decodes it, decodeExample says: " + error
                                  : "protobuf refuses it, decodeExample decodes it"));
    if (!want.ok) {
        if (error.rfind("fuzz: ", 0) != 0) mismatch("message without where: " + error);
        return;
    }
    if (got.x.size() != want.x.size() || got.label != want.label ||
        (!want.x.empty() && std::memcmp(got.x.data(), want.x.data(), want.x.size() * sizeof(float)) != 0))
        mismatch(where + "values differ from protobuf's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    check(data, size, 0);
    const oracle::Decoded any = oracle::decodeWithProtobuf(data, size, 0);
    if (any.ok) {
        check(data, size, any.x.size());
        check(data, size, any.x.size() + 1);
    }
    return 0;
}
