// decodeImage and encodePng: PNGs of every colour type and bit depth exactly, JPEGs within the
// codec's tolerance, channel conversion, fixtures written by PIL, and broken files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/data/sources/imagefolder.h"
#include "imagewriters.h"
#include "tempdirtest.h"

namespace trainbench::engine {
namespace {

using test::errorOf;
using test::luma;

using Bytes = std::vector<uint8_t>;

Bytes noise(size_t n, uint32_t seed) {
    Bytes b(n);
    for (auto& v : b) {
        seed = seed * 1664525u + 1013904223u;
        v = static_cast<uint8_t>(seed >> 24);
    }
    return b;
}

// A smooth HWC RGB pattern (JPEG keeps smooth images close).
Bytes gradient(int height, int width) {
    Bytes b;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            b.push_back(static_cast<uint8_t>(20 + 12 * x));
            b.push_back(static_cast<uint8_t>(10 + 15 * y));
            b.push_back(static_cast<uint8_t>(200 - 5 * (x + y)));
        }
    return b;
}

DecodedImage decode(const std::string& file, int want = 0, const std::string& path = "mem.img") {
    DecodedImage img;
    decodeImage(reinterpret_cast<const uint8_t*>(file.data()), file.size(), want, img, path);
    return img;
}

struct Diff {
    int max = 0;
    double mean = 0;
};
Diff diff(const Bytes& a, const Bytes& b) {
    Diff d;
    for (size_t i = 0; i < a.size(); ++i) {
        const int e = std::abs(int(a[i]) - int(b[i]));
        d.max = std::max(d.max, e);
        d.mean += e;
    }
    d.mean /= static_cast<double>(a.size());
    return d;
}

std::string fixture(const std::string& name) {
    return test::readText(std::string(TRAINBENCH_TEST_DATA_DIR) + "/images/" + name);
}

TEST(ImageDecode, PngRoundTripIsExact) {
    for (int channels : {1, 3}) {
        const int h = 7, w = 5;
        const Bytes chw = noise(static_cast<size_t>(channels * h * w), 7u + channels);
        const std::string png = encodePng(chw.data(), channels, h, w);
        for (int want : {0, channels}) {
            const DecodedImage img = decode(png, want);
            EXPECT_EQ(img.channels, channels);
            EXPECT_EQ(img.height, h);
            EXPECT_EQ(img.width, w);
            EXPECT_EQ(img.pixels, chw) << channels << " channels, want " << want;
        }
    }
}

TEST(ImageDecode, RgbToGreyAndGreyToRgb) {
    // Pure red, green, blue, white, black and one mixed colour, as CHW planes.
    const Bytes chw = {255, 0, 0, 255, 0, 10,  // R
                       0, 255, 0, 255, 0, 20,  // G
                       0, 0, 255, 255, 0, 30};  // B
    const DecodedImage grey = decode(encodePng(chw.data(), 3, 1, 6), 1);
    EXPECT_EQ(grey.channels, 1);
    EXPECT_EQ(grey.pixels, (Bytes{76, 150, 29, 255, 0, 18}));  // as PIL's convert("L")
    const Bytes noisy = noise(3 * 64, 3);
    const DecodedImage g = decode(encodePng(noisy.data(), 3, 8, 8), 1);
    for (size_t i = 0; i < 64; ++i)
        EXPECT_NEAR(g.pixels[i], luma(noisy[i], noisy[64 + i], noisy[128 + i]), 0.5 + 1e-9) << i;

    const Bytes one = noise(12, 5);
    const DecodedImage rgb = decode(encodePng(one.data(), 1, 3, 4), 3);
    EXPECT_EQ(rgb.channels, 3);
    Bytes planes = one;
    planes.insert(planes.end(), one.begin(), one.end());
    planes.insert(planes.end(), one.begin(), one.end());
    EXPECT_EQ(rgb.pixels, planes);
}

TEST(ImageDecode, Png16BitIsScaledWithRounding) {
    const std::vector<int> values = {0, 65535, 32768, 25700, 128, 129, 1000, 60000};
    test::PngSpec spec;
    spec.width = static_cast<int>(values.size());
    spec.height = 1;
    spec.bit_depth = 16;
    Bytes rows;
    for (int v : values) {
        rows.push_back(static_cast<uint8_t>(v >> 8));
        rows.push_back(static_cast<uint8_t>(v & 0xff));
    }
    const DecodedImage img = decode(test::writePng(spec, rows));
    ASSERT_EQ(img.channels, 1);
    for (size_t i = 0; i < values.size(); ++i)
        EXPECT_EQ(img.pixels[i], std::lround(values[i] * 255.0 / 65535.0)) << values[i];

    // 16-bit RGBA: scaled, alpha dropped.
    spec.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    spec.width = 1;
    const DecodedImage rgba = decode(test::writePng(spec, {0xff, 0xff, 0x80, 0x00, 0x00, 0x81, 0x00, 0x00}));
    EXPECT_EQ(rgba.channels, 3);
    EXPECT_EQ(rgba.pixels, (Bytes{255, 128, 1}));
}

TEST(ImageDecode, PngPaletteTransparencyAndAlphaAreDropped) {
    test::PngSpec spec;
    spec.width = 4;
    spec.height = 1;
    spec.color_type = PNG_COLOR_TYPE_PALETTE;
    spec.palette = {{255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
    spec.trns = {0, 128};  // entry 0 transparent, 1 half
    const std::string pal = test::writePng(spec, {0, 1, 2, 0});
    const DecodedImage rgb = decode(pal);
    EXPECT_EQ(rgb.channels, 3);
    EXPECT_EQ(rgb.pixels, (Bytes{255, 0, 10, 255, 0, 255, 20, 0, 0, 0, 30, 0}));
    EXPECT_EQ(decode(pal, 1).pixels, (Bytes{76, 150, 18, 76}));

    spec = {};
    spec.width = 2;
    spec.height = 1;
    spec.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    EXPECT_EQ(decode(test::writePng(spec, {1, 2, 3, 0, 4, 5, 6, 255})).pixels, (Bytes{1, 4, 2, 5, 3, 6}));
    spec.color_type = PNG_COLOR_TYPE_GRAY_ALPHA;
    const DecodedImage ga = decode(test::writePng(spec, {9, 0, 200, 77}));
    EXPECT_EQ(ga.channels, 1);
    EXPECT_EQ(ga.pixels, (Bytes{9, 200}));
    EXPECT_EQ(decode(test::writePng(spec, {9, 0, 200, 77}), 3).pixels, (Bytes{9, 200, 9, 200, 9, 200}));
}

TEST(ImageDecode, PngLowBitDepthsAndInterlacing) {
    test::PngSpec spec;
    spec.width = 8;
    spec.height = 1;
    spec.bit_depth = 1;
    EXPECT_EQ(decode(test::writePng(spec, {0xA5})).pixels, (Bytes{255, 0, 255, 0, 0, 255, 0, 255}));
    spec.bit_depth = 4;
    spec.width = 4;
    EXPECT_EQ(decode(test::writePng(spec, {0x0F, 0x37})).pixels, (Bytes{0, 255, 51, 119}));

    // Adam7: 13x11 RGB, an odd size so every pass is partial.
    spec = {};
    spec.width = 13;
    spec.height = 11;
    spec.color_type = PNG_COLOR_TYPE_RGB;
    spec.interlace = true;
    const Bytes hwc = noise(13 * 11 * 3, 11);
    const DecodedImage img = decode(test::writePng(spec, hwc));
    EXPECT_EQ(test::toHwc(img.pixels, 3, 11, 13), hwc);
}

TEST(ImageDecode, JpegWithinTolerance) {
    const int h = 12, w = 16;
    const Bytes hwc = gradient(h, w);
    const DecodedImage rgb = decode(test::encodeJpeg(hwc.data(), w, h, 3, 95));
    ASSERT_EQ(rgb.channels, 3);
    ASSERT_EQ(rgb.height, h);
    ASSERT_EQ(rgb.width, w);
    const Diff d = diff(test::toHwc(rgb.pixels, 3, h, w), hwc);
    EXPECT_LE(d.max, 6);
    EXPECT_LE(d.mean, 2.0);

    // To grey: libjpeg's luma channel, close to the luma of the source.
    const DecodedImage grey = decode(test::encodeJpeg(hwc.data(), w, h, 3, 95), 1);
    ASSERT_EQ(grey.channels, 1);
    for (size_t i = 0; i < grey.pixels.size(); ++i)
        EXPECT_NEAR(grey.pixels[i], luma(hwc[3 * i], hwc[3 * i + 1], hwc[3 * i + 2]), 4.0) << i;

    // Progressive and 4:2:0 subsampled: same picture, looser.
    const DecodedImage prog = decode(test::encodeJpeg(hwc.data(), w, h, 3, 90, true, true));
    EXPECT_LE(diff(test::toHwc(prog.pixels, 3, h, w), hwc).mean, 3.0);
}

TEST(ImageDecode, GreyJpegStaysGreyOrIsRepeated) {
    const int h = 8, w = 8;
    Bytes g(h * w);
    for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint8_t>(40 + 2 * i);
    const std::string jpg = test::encodeJpeg(g.data(), w, h, 1, 95);
    const DecodedImage grey = decode(jpg);
    EXPECT_EQ(grey.channels, 1);
    EXPECT_LE(diff(grey.pixels, g).max, 4);
    const DecodedImage rgb = decode(jpg, 3);
    ASSERT_EQ(rgb.channels, 3);
    const Bytes r(rgb.pixels.begin(), rgb.pixels.begin() + h * w);
    EXPECT_EQ(r, grey.pixels);
    EXPECT_TRUE(std::equal(r.begin(), r.end(), rgb.pixels.begin() + 2 * h * w));
}

// Written by PIL (tests/data/images/make_fixtures.py): R = 20 + 25x, G = 10 + 40y, B = 200 - 10(x+y).
TEST(ImageDecode, FixturesWrittenByPil) {
    const DecodedImage rgb = decode(fixture("pil_rgb_q95.jpg"));
    ASSERT_EQ(rgb.channels, 3);
    ASSERT_EQ(rgb.height, 6);
    ASSERT_EQ(rgb.width, 8);
    const size_t plane = 48;
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 8; ++x) {
            const size_t i = static_cast<size_t>(y * 8 + x);
            // The pattern's steep steps cost JPEG a few levels even at quality 95.
            EXPECT_NEAR(rgb.pixels[i], 20 + 25 * x, 8) << x << "," << y;
            EXPECT_NEAR(rgb.pixels[plane + i], 10 + 40 * y, 8) << x << "," << y;
            EXPECT_NEAR(rgb.pixels[2 * plane + i], 200 - 10 * (x + y), 8) << x << "," << y;
        }
    // PIL decodes the first row (with the same libjpeg-turbo) to exactly these values.
    EXPECT_EQ(Bytes(rgb.pixels.begin(), rgb.pixels.begin() + 8), (Bytes{21, 47, 71, 95, 122, 146, 171, 197}));
    EXPECT_EQ(Bytes(rgb.pixels.begin() + 96, rgb.pixels.begin() + 104), (Bytes{202, 190, 182, 172, 159, 149, 142, 130}));

    const DecodedImage grey = decode(fixture("pil_grey_progressive.jpg"));
    ASSERT_EQ(grey.channels, 1);
    EXPECT_EQ(Bytes(grey.pixels.begin(), grey.pixels.begin() + 8), (Bytes{35, 41, 47, 53, 60, 66, 73, 79}));

    const DecodedImage pal = decode(fixture("pil_palette_trns.png"));
    ASSERT_EQ(pal.channels, 3);
    const Bytes colours[4] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 8; ++x)
            for (size_t c = 0; c < 3; ++c)
                EXPECT_EQ(pal.pixels[c * plane + static_cast<size_t>(y * 8 + x)], colours[(x + y) % 4][c]);
}

TEST(ImageDecode, TruncatedOrCorruptPngNamesTheFile) {
    const Bytes px = noise(3 * 32 * 32, 1);
    const std::string png = encodePng(px.data(), 3, 32, 32);
    const std::string prefix = "/data/cls/a.png: corrupt or truncated PNG: ";
    for (size_t keep : {size_t{12}, size_t{30}, png.size() / 2, png.size() - 12, png.size() - 1}) {
        const std::string msg = errorOf([&] { decode(png.substr(0, keep), 0, "/data/cls/a.png"); });
        EXPECT_EQ(msg.rfind(prefix, 0), 0u) << keep << ": " << msg;
        EXPECT_GT(msg.size(), prefix.size()) << "libpng's reason follows";
    }
    std::string bad = png;
    bad[bad.size() / 2] ^= 0x55;  // inside IDAT: zlib's check fails before the chunk's CRC is read
    EXPECT_EQ(errorOf([&] { decode(bad, 0, "/data/cls/a.png"); }), prefix + "IDAT: incorrect data check");
    bad = png;
    bad[16] ^= 0x55;  // IHDR's width (after the 8-byte signature and the chunk's length and type)
    EXPECT_EQ(errorOf([&] { decode(bad, 0, "/data/cls/a.png"); }), prefix + "IHDR: CRC error");
}

TEST(ImageDecode, TruncatedOrCorruptJpegNamesTheFile) {
    const Bytes hwc = noise(3 * 32 * 32, 2);
    const std::string jpg = test::encodeJpeg(hwc.data(), 32, 32, 3, 90);
    const std::string prefix = "/data/cls/b.jpg: corrupt or truncated JPEG: ";
    EXPECT_EQ(errorOf([&] { decode(jpg.substr(0, jpg.size() / 2), 0, "/data/cls/b.jpg"); }),
              prefix + "Premature end of JPEG file");
    for (size_t keep : {size_t{3}, size_t{20}, size_t{200}, jpg.size() - 2}) {
        const std::string msg = errorOf([&] { decode(jpg.substr(0, keep), 0, "/data/cls/b.jpg"); });
        EXPECT_EQ(msg.rfind(prefix, 0), 0u) << keep << ": " << msg;
        EXPECT_GT(msg.size(), prefix.size()) << "libjpeg's reason follows";
    }
}

TEST(ImageDecode, OtherDataIsNotAnImage) {
    for (const std::string& data : {std::string("hello, not a picture\n"), std::string(), std::string("GIF89a......"),
                                   std::string("\x89PNG\r\n", 6), std::string("\xFF\xD8", 2)})
        EXPECT_EQ(errorOf([&] { decode(data, 0, "/d/x.png"); }), "/d/x.png: not a PNG or JPEG image");
}

TEST(ImageDecode, BadArguments) {
    const Bytes px(4, 1);
    const std::string png = encodePng(px.data(), 1, 2, 2);
    EXPECT_THROW(decode(png, 2), std::invalid_argument);
    EXPECT_THROW(decode(png, 4), std::invalid_argument);
    EXPECT_THROW(encodePng(px.data(), 2, 1, 2), std::invalid_argument);
    EXPECT_THROW(encodePng(px.data(), 1, 0, 2), std::invalid_argument);
}

TEST(ImageDecode, OutputCapacityIsReused) {
    const Bytes a = noise(28 * 28, 1), b = noise(28 * 28, 2);
    DecodedImage img;
    const std::string pa = encodePng(a.data(), 1, 28, 28), pb = encodePng(b.data(), 1, 28, 28);
    decodeImage(reinterpret_cast<const uint8_t*>(pa.data()), pa.size(), 1, img, "a");
    const uint8_t* before = img.pixels.data();
    decodeImage(reinterpret_cast<const uint8_t*>(pb.data()), pb.size(), 1, img, "b");
    EXPECT_EQ(img.pixels.data(), before);
    EXPECT_EQ(img.pixels, b);
}

}  // namespace
}  // namespace trainbench::engine
