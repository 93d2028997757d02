#pragma once
// The PNG (libpng) and JPEG (libjpeg-turbo) decoders behind decodeImage. Internal to
// engine/data/sources: callers use imagefolder.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine {

// Larger images are refused from their header, before anything is allocated (a corrupt header can
// claim 2^31 x 2^31). An image is one training example at its own size, turned into 4-byte floats
// per channel: 4096 x 4096 RGB is already 200 MB per example (docs/experiment-format.md, "Limits").
inline constexpr uint64_t kMaxImageSide = 16384;
inline constexpr uint64_t kMaxImagePixels = uint64_t{1} << 24;

// Throws DataError naming the file and the limit if a `format` ("PNG", "JPEG") image of this size
// is over kMaxImageSide or kMaxImagePixels.
void checkImageSize(const std::string& path, const char* format, uint64_t width, uint64_t height);

// Pixels as a codec delivers them: interleaved (HWC) rows of `stride` bytes, 8 bits per channel,
// 1 grey, 2 grey + alpha, 3 RGB or 4 RGBA.
struct InterleavedImage {
    int channels = 0, height = 0, width = 0;
    size_t stride = 0;
};

// PNG in memory to 8-bit grey(+alpha) or RGB(A): palettes expanded, 16 bits scaled to 8, low bit
// depths expanded, interlacing undone, no gamma correction (the stored values, as PIL gives them).
InterleavedImage decodePngInterleaved(const uint8_t* data, size_t size, std::vector<uint8_t>& pixels,
                                      const std::string& path);

// JPEG in memory to `want_channels` (1 = libjpeg's luma, 3 = RGB; 0 = grey for a greyscale JPEG,
// else RGB). CMYK JPEGs are refused.
InterleavedImage decodeJpegInterleaved(const uint8_t* data, size_t size, int want_channels,
                                       std::vector<uint8_t>& pixels, const std::string& path);

}  // namespace trainbench::engine
