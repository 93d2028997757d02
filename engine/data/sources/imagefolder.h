#pragma once
// Image-folder sources: one sub-folder per class (sorted by name: the first is label 0), PNG and JPEG
// files inside (by magic bytes, not extension). Decoding uses libpng and libjpeg-turbo.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/storage/storage.h"

namespace trainbench::engine {

struct ImageFolderIndex {
    std::vector<std::string> classes;  // sub-folder names, sorted
    std::vector<std::string> files;    // every image file, sorted by class then name
    std::vector<int32_t> labels;       // class index of each file
};

// Lists `root`. Throws DataError naming the folder when it is missing, has no class sub-folders,
// or holds no files at all. Files that are not regular files are ignored; hidden files and folders
// (".name") too, and so are folders inside a class folder. Symbolic links count as their targets.
// Every other file is listed whatever its name: decodeImage tells images by their bytes.
ImageFolderIndex listImageFolder(const std::string& root);

struct DecodedImage {
    int channels = 0, height = 0, width = 0;
    std::vector<uint8_t> pixels;  // CHW (planar), channels * height * width bytes
};

// Decodes a PNG or JPEG held in memory to `want_channels` (1 = grey, 3 = RGB; 0 = as stored,
// grey or RGB), 8 bits per channel, into `out` (reusing its capacity). The stored values are kept
// as PIL and TensorFlow give them: no gamma correction; alpha (and a palette's transparency) is
// dropped, not composited; 16-bit PNGs are scaled to 8 bits with rounding; RGB to grey uses
// PIL's convert("L") weights 0.299, 0.587, 0.114 (a JPEG's own luma channel for JPEGs); grey to
// RGB repeats the grey. Throws DataError
//   "<path>: not a PNG or JPEG image"                 for other data (by magic bytes),
//   "<path>: corrupt or truncated PNG: <libpng's message>"  (or JPEG, with libjpeg's message)
// and for CMYK JPEGs and images of more than 2^28 pixels; std::invalid_argument for a bad
// want_channels. A JPEG that libjpeg only warns about (premature end, bad entropy data) is corrupt.
// Thread-safe.
void decodeImage(const uint8_t* data, size_t size, int want_channels, DecodedImage& out, const std::string& path);

// Encodes CHW u8 pixels (1 or 3 channels) as a PNG file's bytes (for the one-file-per-example layout).
// Throws std::invalid_argument for other channel counts or an empty image.
std::string encodePng(const uint8_t* chw, int channels, int height, int width);

}  // namespace trainbench::engine
