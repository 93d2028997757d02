#pragma once
// Test-only image writers for what encodePng cannot make: PNGs of every colour type, bit depth and
// interlacing (libpng's classic API), and JPEGs (libjpeg). Failures abort the test binary: they
// would be bugs in the test, not in the code under test.
#include <png.h>

#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <cstring>
#include <jpeglib.h>

#include <csetjmp>
#include <string>
#include <vector>

namespace trainbench::engine::test {

struct PngSpec {
    int width = 0, height = 0;
    int color_type = PNG_COLOR_TYPE_GRAY;  // PNG_COLOR_TYPE_*
    int bit_depth = 8;
    bool interlace = false;                // Adam7
    std::vector<png_color> palette;        // PNG_COLOR_TYPE_PALETTE
    std::vector<uint8_t> trns;             // alpha per palette entry
};

namespace detail {

inline void appendToString(png_structp png, png_bytep data, size_t n) {
    static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

// The setjmp frame holds nothing with a destructor (see engine/data/sources/pngcodec.cpp).
inline bool writePngRows(png_structp png, png_infop info, const PngSpec* spec, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_set_IHDR(png, info, static_cast<png_uint_32>(spec->width), static_cast<png_uint_32>(spec->height),
                 spec->bit_depth, spec->color_type, spec->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (!spec->palette.empty())
        png_set_PLTE(png, info, spec->palette.data(), static_cast<int>(spec->palette.size()));
    if (!spec->trns.empty())
        png_set_tRNS(png, info, spec->trns.data(), static_cast<int>(spec->trns.size()), nullptr);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    return true;
}

}  // namespace detail

// `rows`: the image's rows packed exactly as PNG stores them (16-bit samples big-endian).
inline std::string writePng(const PngSpec& spec, const std::vector<uint8_t>& rows) {
    std::string out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(png, &out, detail::appendToString, nullptr);
    const size_t stride = rows.size() / static_cast<size_t>(spec.height);
    std::vector<png_bytep> rowPtrs;
    for (int y = 0; y < spec.height; ++y)
        rowPtrs.push_back(const_cast<png_bytep>(rows.data()) + static_cast<size_t>(y) * stride);
    const bool ok = detail::writePngRows(png, info, &spec, rowPtrs.data());
    png_destroy_write_struct(&png, &info);
    if (!ok) std::abort();
    return out;
}

// HWC pixels (1 = grey, 3 = RGB) as a JPEG file's bytes; 4:4:4 unless `subsample` (4:2:0).
inline std::string encodeJpeg(const uint8_t* hwc, int width, int height, int channels, int quality,
                              bool progressive = false, bool subsample = false) {
    jpeg_compress_struct c{};
    jpeg_error_mgr err{};
    c.err = jpeg_std_error(&err);  // its error_exit prints and exits: fine for a test helper
    jpeg_create_compress(&c);
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    jpeg_mem_dest(&c, &buf, &size);
    c.image_width = static_cast<JDIMENSION>(width);
    c.image_height = static_cast<JDIMENSION>(height);
    c.input_components = channels;
    c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    if (progressive) jpeg_simple_progression(&c);
    if (channels == 3 && !subsample) c.comp_info[0].h_samp_factor = c.comp_info[0].v_samp_factor = 1;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = const_cast<JSAMPROW>(hwc) + static_cast<size_t>(c.next_scanline) * width * channels;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    std::string out(reinterpret_cast<const char*>(buf), size);
    jpeg_destroy_compress(&c);
    std::free(buf);
    return out;
}

// CHW to HWC and back, for comparing decoded (planar) pixels with encoder input (interleaved).
inline std::vector<uint8_t> toHwc(const std::vector<uint8_t>& chw, int channels, int height, int width) {
    const size_t plane = static_cast<size_t>(height) * width;
    std::vector<uint8_t> hwc(chw.size());
    for (size_t i = 0; i < plane; ++i)
        for (size_t c = 0; c < static_cast<size_t>(channels); ++c) hwc[i * channels + c] = chw[c * plane + i];
    return hwc;
}

// ITU-R 601 luma, the reference for RGB to grey (within rounding).
inline double luma(double r, double g, double b) { return 0.299 * r + 0.587 * g + 0.114 * b; }

}  // namespace trainbench::engine::test
