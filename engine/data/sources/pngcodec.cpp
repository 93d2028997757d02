// PNG decoding with libpng's classic API, encoding with its simplified API.
//
// libpng reports errors by longjmp. The functions that call setjmp below hold no C++ object with a
// destructor and allocate nothing, so a jump out of libpng skips nothing; everything with a
// destructor (buffers, the libpng structs' guard) lives in their callers.
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "engine/data/sources/imagecodecs.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/util/errors.h"

namespace trainbench::engine {
namespace {

// What libpng's callbacks need: the input, and room for the error message.
struct PngInput {
    const uint8_t* data;
    size_t size;
    size_t pos;
    char message[256];
};

void pngOnError(png_structp png, png_const_charp msg) {
    auto* in = static_cast<PngInput*>(png_get_error_ptr(png));
    std::snprintf(in->message, sizeof in->message, "%s", msg);
    png_longjmp(png, 1);
}

// Warnings (an incorrect sRGB profile, a bad ancillary chunk) leave the pixels intact: stay quiet.
void pngOnWarning(png_structp, png_const_charp) {}

void pngOnRead(png_structp png, png_bytep dst, size_t n) {
    auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
    if (n > in->size - in->pos) png_error(png, "unexpected end of file");
    std::memcpy(dst, in->data + in->pos, n);
    in->pos += n;
}

// Reads the header and asks for 8-bit output; false after a libpng error.
bool pngReadHeader(png_structp png, png_infop info, InterleavedImage* out) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_info(png, info);
    const int color = png_get_color_type(png, info);
    const int depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);  // RGBA when it has tRNS
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (depth == 16) png_set_scale_16(png);  // rounds (v * 255 / 65535), unlike strip_16's truncation
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    out->width = static_cast<int>(png_get_image_width(png, info));
    out->height = static_cast<int>(png_get_image_height(png, info));
    out->channels = png_get_channels(png, info);
    out->stride = png_get_rowbytes(png, info);
    return true;
}

bool pngReadRows(png_structp png, png_infop info, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_image(png, rows);
    png_read_end(png, info);  // to IEND: a file cut after its pixel data is still truncated
    return true;
}

struct PngReadGuard {
    png_structp png = nullptr;
    png_infop info = nullptr;
    ~PngReadGuard() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

[[noreturn]] void failPng(const std::string& path, const std::string& message) {
    throw DataError(path + ": corrupt or truncated PNG: " + message);
}

uint32_t bigEndian32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The size limits, from the IHDR chunk itself, before libpng allocates anything for the image
// (png_read_update_info allocates row buffers from the width). IHDR must be the first chunk; a file
// where it is not is left to libpng to refuse. Also refused: a header that promises more pixel data
// than the file can hold, since deflate shrinks data at most 1032-fold.
void checkPngHeader(const uint8_t* data, size_t size, const std::string& path) {
    constexpr size_t kIhdrEnd = 8 + 8 + 13 + 4;  // signature, chunk length and type, IHDR data, CRC
    if (size < kIhdrEnd || std::memcmp(data + 12, "IHDR", 4) != 0) return;
    // A damaged IHDR is libpng's to report ("IHDR: CRC error"), not a size to be judged.
    if (crc32(0, data + 12, 4 + 13) != bigEndian32(data + 29)) return;
    const uint64_t width = bigEndian32(data + 16), height = bigEndian32(data + 20);
    checkImageSize(path, "PNG", width, height);
    const int depth = data[24];
    int samples = 0;  // per pixel, as stored
    switch (data[25]) {
        case PNG_COLOR_TYPE_GRAY: case PNG_COLOR_TYPE_PALETTE: samples = 1; break;
        case PNG_COLOR_TYPE_GRAY_ALPHA: samples = 2; break;
        case PNG_COLOR_TYPE_RGB: samples = 3; break;
        case PNG_COLOR_TYPE_RGB_ALPHA: samples = 4; break;
        default: return;  // libpng names the bad colour type
    }
    const uint64_t stored = ((width * static_cast<uint64_t>(samples * depth) + 7) / 8 + 1) * height;  // + filter byte per row
    if (stored > 1032 * uint64_t{size})
        failPng(path, "its header says " + std::to_string(width) + "x" + std::to_string(height) + " pixels (" +
                          std::to_string(stored) + " bytes of image data), more than a file of " +
                          std::to_string(size) + " bytes can hold");
}

}  // namespace

InterleavedImage decodePngInterleaved(const uint8_t* data, size_t size, std::vector<uint8_t>& pixels,
                                      const std::string& path) {
    checkPngHeader(data, size, path);
    PngInput in{data, size, 0, {}};
    PngReadGuard guard;
    guard.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &in, pngOnError, pngOnWarning);
    if (guard.png == nullptr) throw std::bad_alloc();
    guard.info = png_create_info_struct(guard.png);
    if (guard.info == nullptr) throw std::bad_alloc();
    png_set_read_fn(guard.png, &in, pngOnRead);
    png_set_user_limits(guard.png, kMaxImageSide, kMaxImageSide);  // libpng's own check, should IHDR be elsewhere

    InterleavedImage img;
    if (!pngReadHeader(guard.png, guard.info, &img)) failPng(path, in.message);
    checkImageSize(path, "PNG", static_cast<uint64_t>(img.width), static_cast<uint64_t>(img.height));  // as libpng read it
    pixels.resize(img.stride * static_cast<size_t>(img.height));
    std::vector<png_bytep> rows(static_cast<size_t>(img.height));
    for (size_t y = 0; y < rows.size(); ++y) rows[y] = pixels.data() + y * img.stride;
    if (!pngReadRows(guard.png, guard.info, rows.data())) failPng(path, in.message);
    return img;
}

std::string encodePng(const uint8_t* chw, int channels, int height, int width) {
    if (channels != 1 && channels != 3) throw std::invalid_argument("encodePng: channels must be 1 or 3");
    if (height <= 0 || width <= 0) throw std::invalid_argument("encodePng: height and width must be > 0");
    const size_t plane = static_cast<size_t>(height) * static_cast<size_t>(width);
    std::vector<uint8_t> hwc(chw, chw + plane * static_cast<size_t>(channels));
    if (channels == 3)
        for (size_t i = 0; i < plane; ++i)
            for (size_t c = 0; c < 3; ++c) hwc[i * 3 + c] = chw[c * plane + i];

    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = static_cast<png_uint_32>(width);
    image.height = static_cast<png_uint_32>(height);
    image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    png_alloc_size_t bytes = PNG_IMAGE_PNG_SIZE_MAX(image);
    std::string out(bytes, '\0');
    if (!png_image_write_to_memory(&image, out.data(), &bytes, 0, hwc.data(), 0, nullptr)) {
        const std::string why = image.message;
        png_image_free(&image);
        throw DataError("cannot encode PNG: " + why);
    }
    out.resize(bytes);
    return out;
}

}  // namespace trainbench::engine
