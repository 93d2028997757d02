// tf.train.Example: encoding byte for byte as the wire format spec gives it (and inside a TFRecord
// frame with its masked CRCs), decoding what was encoded, and the messages for bad features.
#include "engine/data/records/example.h"

#include <unistd.h>

#include "engine/data/records/tfrecord.h"
#include "examplewire.h"

namespace trainbench::engine {
namespace {

using namespace exampletest;
using namespace recordtest;

TEST(Example, EncodesByteExactlyAndFramesLikeTensorFlow) {
    // Example{features{feature{"image": bytes_list{[01 02 03]}}, feature{"label": int64_list{[7]}}}},
    // map entries in key order.
    const Bytes expected = {0x0a, 0x22,                                              // Example.features, 34 bytes
                            0x0a, 0x10,                                              // Features.feature entry, 16
                            0x0a, 0x05, 'i', 'm', 'a', 'g', 'e',                     // key
                            0x12, 0x07, 0x0a, 0x05, 0x0a, 0x03, 0x01, 0x02, 0x03,  // value: bytes_list{value}
                            0x0a, 0x0e,                                              // entry, 14
                            0x0a, 0x05, 'l', 'a', 'b', 'e', 'l',                     // key
                            0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x07};               // int64_list{packed [7]}
    const uint8_t px[] = {1, 2, 3};
    const std::string encoded = encodeExample(px, 3, 7);
    EXPECT_EQ(Bytes(encoded.begin(), encoded.end()), expected);

    // The same record in a TFRecord file: length 36, masked CRC-32C of the length and of the data.
    const Bytes frameExpected = {0x24, 0, 0, 0, 0, 0, 0, 0, 0x42, 0x2b, 0x80, 0x4d};
    const std::string p =
        (fs::temp_directory_path() / ("trainbench-example-frame-" + std::to_string(::getpid()))).string();
    {
        TFRecordWriter w(p);
        w.write(encoded);
        w.close();
    }
    Bytes file = readFile(p);
    fs::remove(p);
    ASSERT_EQ(file.size(), 12 + expected.size() + 4);
    EXPECT_EQ(Bytes(file.begin(), file.begin() + 12), frameExpected);
    EXPECT_EQ(Bytes(file.begin() + 12, file.end() - 4), expected);
    EXPECT_EQ(Bytes(file.end() - 4, file.end()), (Bytes{0x94, 0xc7, 0x42, 0x80}));
    EXPECT_EQ(file, frame(encoded));

    const Sample s = decode(encoded, 3);
    EXPECT_EQ(s.x, (std::vector<float>{1 * (1.0f / 255.0f), 2 * (1.0f / 255.0f), 3 * (1.0f / 255.0f)}));
    EXPECT_EQ(s.label, 7);
}

TEST(Example, EncodesFloatsAndShapeByteExactly) {
    const float v[] = {0.5f, -2.0f};
    const std::string encoded = encodeExampleFloat(v, 2, 3, ImageShape{1, 1, 2});
    // Entries in key order: channels, height, image, label, width.
    Wire features;
    features.bytes(1, entry("channels", int64Feature(1)));
    features.bytes(1, entry("height", int64Feature(1)));
    features.bytes(1, entry("image", Wire().bytes(2, Wire().bytes(1, floatBytes({0.5f, -2.0f})).b).b));
    features.bytes(1, entry("label", int64Feature(3)));
    features.bytes(1, entry("width", int64Feature(2)));
    EXPECT_EQ(encoded, Wire().bytes(1, features.b).b);
    const std::string floatList = Wire().bytes(1, floatBytes({0.5f, -2.0f})).b;
    EXPECT_EQ(Bytes(floatList.begin(), floatList.end()),
              (Bytes{0x0a, 0x08, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0xc0}));
    const Sample s = decode(encoded, 2);
    EXPECT_EQ(s.x, (std::vector<float>{0.5f, -2.0f}));
    EXPECT_EQ(s.label, 3);
}

TEST(Example, DecodesWhatItEncodesAndReusesCapacity) {
    std::vector<uint8_t> px(784);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 13);
    const std::string a = encodeExample(px.data(), px.size(), 9, ImageShape{1, 28, 28});
    Sample s;
    decodeExample(u8(a), a.size(), 784, s, "w");
    const float* data = s.x.data();
    for (size_t i = 0; i < px.size(); ++i) ASSERT_EQ(s.x[i], static_cast<float>(px[i]) * (1.0f / 255.0f)) << i;
    EXPECT_EQ(s.label, 9);
    px[5] = 200;
    const std::string b = encodeExample(px.data(), px.size(), 4);
    decodeExample(u8(b), b.size(), 784, s, "w");
    EXPECT_EQ(s.x.data(), data);
    EXPECT_EQ(s.x[5], 200.0f * (1.0f / 255.0f));
    EXPECT_EQ(s.label, 4);
}


TEST(Example, FeatureErrorsSayWhatIsWrong) {
    const std::string img = entry("image", bytesFeature("\x01\x02\x03"));
    const std::string lbl = entry("label", int64Feature(2));
    const std::string where = "f: record at byte offset 0: ";
    EXPECT_EQ(decodeError(example({lbl})),
              where + "feature 'image' is missing; expected a bytes_list (u8 pixels) or a float_list");
    EXPECT_EQ(decodeError(example({img})), where + "feature 'label' is missing; expected an int64_list");
    EXPECT_EQ(decodeError(example({entry("image", int64Feature(1)), lbl})),
              where + "feature 'image' is an int64_list; expected a bytes_list (u8 pixels) or a float_list");
    EXPECT_EQ(decodeError(example({entry("image", ""), lbl})),
              where + "feature 'image' has no value list; expected a bytes_list (u8 pixels) or a float_list");
    EXPECT_EQ(decodeError(example({entry("image", Wire().bytes(1, Wire().bytes(1, "a").bytes(1, "b").b).b), lbl})),
              where + "feature 'image' holds 2 byte strings; expected 1 (the u8 pixels)");
    EXPECT_EQ(decodeError(example({img, lbl}), 784), where + "feature 'image' has 3 values; expected 784");
    EXPECT_EQ(decodeError(example({img, entry("label", bytesFeature("7"))})),
              where + "feature 'label' is a bytes_list; expected an int64_list");
    EXPECT_EQ(decodeError(example({img, entry("label", Wire().bytes(3, Wire().bytes(1, "\x01\x02").b).b)})),
              where + "feature 'label' holds 2 values; expected 1");
    EXPECT_EQ(decodeError(example({img, entry("label", int64Feature(-1))})), where + "label -1 is outside [0, 2^31)");
    EXPECT_EQ(decodeError(example({img, entry("label", int64Feature(int64_t{1} << 31))})),
              where + "label 2147483648 is outside [0, 2^31)");
    EXPECT_EQ(decode(example({img, entry("label", int64Feature(INT32_MAX))})).label, INT32_MAX);
    EXPECT_EQ(decodeError(""), where + "feature 'image' is missing; expected a bytes_list (u8 pixels) or a float_list");
}


}  // namespace
}  // namespace trainbench::engine
