// The size limits of decodeImage: a PNG or JPEG whose header claims more than kMaxImageSide pixels
// per side or kMaxImagePixels in all is refused from its header, naming the file and the limit,
// before anything is allocated for its pixels; one just within the limits is decoded (or, with no
// pixel data behind the header, refused as truncated rather than as too large).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "engine/data/sources/imagecodecs.h"
#include "engine/data/sources/imagefolder.h"
#include "imagewriters.h"
#include "tempdirtest.h"

namespace trainbench::engine {
namespace {

using test::errorOf;

void putBigEndian32(std::string& s, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xFF);
}

// A PNG of only its signature and an 8-bit grey IHDR claiming width x height (CRC correct): all a
// decoder sees before it allocates.
std::string pngHeader(uint32_t width, uint32_t height) {
    std::string ihdr = "IHDR";
    putBigEndian32(ihdr, width);
    putBigEndian32(ihdr, height);
    ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // depth 8, grey, deflate, filter 0, no interlace
    std::string png = "\x89PNG\r\n\x1a\n";
    putBigEndian32(png, 13);
    png += ihdr;
    putBigEndian32(png, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(ihdr.data()), 17)));
    return png;
}

// A real small JPEG whose start-of-frame says width x height instead.
std::string jpegClaiming(uint16_t width, uint16_t height) {
    std::vector<uint8_t> px(3 * 16 * 16, 128);
    std::string jpg = test::encodeJpeg(px.data(), 16, 16, 3, 90);
    const size_t sof = jpg.find("\xFF\xC0");
    EXPECT_NE(sof, std::string::npos);
    jpg[sof + 5] = static_cast<char>(height >> 8);  // marker, length (2), precision (1), then height, width
    jpg[sof + 6] = static_cast<char>(height & 0xFF);
    jpg[sof + 7] = static_cast<char>(width >> 8);
    jpg[sof + 8] = static_cast<char>(width & 0xFF);
    return jpg;
}

std::string decodeError(const std::string& file, const std::string& path) {
    return errorOf([&] {
        DecodedImage img;
        decodeImage(reinterpret_cast<const uint8_t*>(file.data()), file.size(), 0, img, path);
    });
}

const std::string kSide = std::to_string(kMaxImageSide);
const std::string kPixels = std::to_string(kMaxImagePixels);

TEST(ImageLimits, PngWiderOrTallerThanTheLimitIsRefusedFromItsHeader) {
    EXPECT_EQ(decodeError(pngHeader(kMaxImageSide + 1, 1), "/d/wide.png"),
              "/d/wide.png: PNG of " + std::to_string(kMaxImageSide + 1) + "x1 pixels: its width is over the limit of " +
                  kSide + " pixels per side");
    EXPECT_EQ(decodeError(pngHeader(1, 0x7FFFFFFF), "/d/tall.png"),
              "/d/tall.png: PNG of 1x2147483647 pixels: its height is over the limit of " + kSide + " pixels per side");
    // At the limit: decoded.
    std::vector<uint8_t> row(kMaxImageSide, 7);
    const std::string png = encodePng(row.data(), 1, 1, static_cast<int>(kMaxImageSide));
    DecodedImage img;
    decodeImage(reinterpret_cast<const uint8_t*>(png.data()), png.size(), 0, img, "/d/row.png");
    EXPECT_EQ(img.width, static_cast<int>(kMaxImageSide));
    EXPECT_EQ(img.pixels, row);
}

TEST(ImageLimits, PngOfTooManyPixelsIsRefusedFromItsHeader) {
    // 2^28 pixels passed the old limit: 256 MiB allocated for a 33-byte file before libpng found it truncated.
    EXPECT_EQ(decodeError(pngHeader(16384, 16384), "/d/huge.png"),
              "/d/huge.png: PNG of 16384x16384 pixels is over the limit of " + kPixels + " pixels per image");
    EXPECT_EQ(decodeError(pngHeader(4097, 4096), "/d/big.png"),
              "/d/big.png: PNG of 4097x4096 pixels is over the limit of " + kPixels + " pixels per image");
    // Just within: not too large, but 33 bytes cannot hold 16 MiB of pixels, which is said before allocating them.
    EXPECT_EQ(decodeError(pngHeader(4096, 4096), "/d/cut.png"),
              "/d/cut.png: corrupt or truncated PNG: its header says 4096x4096 pixels (16781312 bytes of image "
              "data), more than a file of 33 bytes can hold");
}

TEST(ImageLimits, JpegOverTheLimitsIsRefusedFromItsHeader) {
    EXPECT_EQ(decodeError(jpegClaiming(kMaxImageSide + 1, 16), "/d/wide.jpg"),
              "/d/wide.jpg: JPEG of " + std::to_string(kMaxImageSide + 1) +
                  "x16 pixels: its width is over the limit of " + kSide + " pixels per side");
    EXPECT_EQ(decodeError(jpegClaiming(16, 65000), "/d/tall.jpg"),
              "/d/tall.jpg: JPEG of 16x65000 pixels: its height is over the limit of " + kSide + " pixels per side");
    EXPECT_EQ(decodeError(jpegClaiming(4097, 4096), "/d/big.jpg"),
              "/d/big.jpg: JPEG of 4097x4096 pixels is over the limit of " + kPixels + " pixels per image");
    // Just within: past the limits, and refused for what it is, a JPEG whose data ends early.
    const std::string cut = decodeError(jpegClaiming(4096, 4096), "/d/cut.jpg");
    EXPECT_EQ(cut.rfind("/d/cut.jpg: corrupt or truncated JPEG: ", 0), 0u) << cut;
}

}  // namespace
}  // namespace trainbench::engine
