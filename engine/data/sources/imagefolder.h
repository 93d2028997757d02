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
// or holds no files at all. Files that are not regular files are ignored; hidden files too.
ImageFolderIndex listImageFolder(const std::string& root);

struct DecodedImage {
    int channels = 0, height = 0, width = 0;
    std::vector<uint8_t> pixels;  // CHW (planar), channels * height * width bytes
};

// Decodes a PNG or JPEG held in memory to `want_channels` (1 = grey, 3 = RGB; 0 = as stored,
// grey or RGB), 8 bits per channel, into `out` (reusing its capacity). Throws DataError naming
// `path` for data that is neither format, or is truncated or corrupt.
void decodeImage(const uint8_t* data, size_t size, int want_channels, DecodedImage& out, const std::string& path);

// Encodes CHW u8 pixels (1 or 3 channels) as a PNG file's bytes (for the one-file-per-example layout).
std::string encodePng(const uint8_t* chw, int channels, int height, int width);

}  // namespace trainbench::engine
