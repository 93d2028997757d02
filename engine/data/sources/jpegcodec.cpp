// JPEG decoding with libjpeg-turbo's classic API.
//
// libjpeg reports errors through error_exit, which must not return; ours longjmps (a C++ exception
// cannot cross libjpeg's C frames). As in pngcodec.cpp, the functions that call setjmp hold no
// C++ object with a destructor; buffers and the struct's cleanup live in their caller.
#include <cstdio>  // jpeglib.h needs FILE

#include <jpeglib.h>
#include <jerror.h>

#include <csetjmp>

#include "engine/data/sources/imagecodecs.h"
#include "engine/util/errors.h"

namespace trainbench::engine {
namespace {

struct JpegErrors {
    jpeg_error_mgr pub;  // first: libjpeg hands back a pointer to it
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpegOnError(j_common_ptr cinfo) {
    auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, errors->message);
    std::longjmp(errors->jump, 1);
}

// libjpeg only warns about a file that ends early or entropy data it cannot decode, and fills the
// rest of the image with grey: that is a broken example, so it fails here like an error. Stray
// bytes before a marker (common in camera files) leave the pixels intact and are let through.
void jpegOnMessage(j_common_ptr cinfo, int level) {
    if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA) jpegOnError(cinfo);
}

// Creates the decompressor and reads the header; false after a libjpeg error.
bool jpegReadHeader(jpeg_decompress_struct* cinfo, JpegErrors* errors, const uint8_t* data, size_t size) {
    if (setjmp(errors->jump)) return false;
    jpeg_create_decompress(cinfo);
    jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
    jpeg_read_header(cinfo, TRUE);
    return true;
}

// Starts decoding to the wanted colour space (a progressive JPEG's start allocates coefficients for
// the whole image, so the size is checked before); false after a libjpeg error.
bool jpegStart(jpeg_decompress_struct* cinfo, JpegErrors* errors, int want_channels) {
    if (setjmp(errors->jump)) return false;
    const bool grey = want_channels == 1 || (want_channels == 0 && cinfo->jpeg_color_space == JCS_GRAYSCALE);
    cinfo->out_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(cinfo);
    return true;
}

bool jpegReadRows(jpeg_decompress_struct* cinfo, JpegErrors* errors, uint8_t* dst, size_t stride) {
    if (setjmp(errors->jump)) return false;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = dst + static_cast<size_t>(cinfo->output_scanline) * stride;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_decompress(cinfo);
    return true;
}

struct JpegGuard {
    jpeg_decompress_struct* cinfo;
    ~JpegGuard() { jpeg_destroy_decompress(cinfo); }  // safe on a struct never created (mem is null)
};

[[noreturn]] void failJpeg(const std::string& path, const char* message) {
    throw DataError(path + ": corrupt or truncated JPEG: " + message);
}

}  // namespace

InterleavedImage decodeJpegInterleaved(const uint8_t* data, size_t size, int want_channels,
                                       std::vector<uint8_t>& pixels, const std::string& path) {
    jpeg_decompress_struct cinfo{};
    JpegErrors errors{};
    cinfo.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = jpegOnError;
    errors.pub.emit_message = jpegOnMessage;
    JpegGuard guard{&cinfo};

    if (!jpegReadHeader(&cinfo, &errors, data, size)) failJpeg(path, errors.message);
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK)
        throw DataError(path + ": CMYK JPEG images are not supported (convert them to RGB)");
    checkImageSize(path, "JPEG", cinfo.image_width, cinfo.image_height);
    if (!jpegStart(&cinfo, &errors, want_channels)) failJpeg(path, errors.message);
    InterleavedImage img;
    img.width = static_cast<int>(cinfo.output_width);
    img.height = static_cast<int>(cinfo.output_height);
    img.channels = cinfo.output_components;
    img.stride = static_cast<size_t>(img.width) * static_cast<size_t>(img.channels);
    pixels.resize(img.stride * static_cast<size_t>(img.height));
    if (!jpegReadRows(&cinfo, &errors, pixels.data(), img.stride)) failJpeg(path, errors.message);
    return img;
}

}  // namespace trainbench::engine
