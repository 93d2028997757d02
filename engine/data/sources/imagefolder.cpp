#include "engine/data/sources/imagefolder.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "engine/data/sources/imagecodecs.h"
#include "engine/util/errors.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;

// A decode buffer per thread, so pipeline threads decode without allocating; one huge image
// must not keep its buffer forever, though.
constexpr size_t kKeepScratchBytes = size_t{16} << 20;

bool hidden(const std::string& name) { return !name.empty() && name.front() == '.'; }

// Names of the visible sub-folders (folders = true) or regular files of `dir`, sorted. Symbolic
// links count as what they point to; dangling ones are skipped.
std::vector<std::string> entries(const fs::path& dir, bool folders) {
    std::vector<std::string> names;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (hidden(name)) continue;
        std::error_code typeEc;
        const bool match = folders ? it->is_directory(typeEc) : it->is_regular_file(typeEc);
        if (match) names.push_back(name);
    }
    if (ec) throw DataError(dir.string() + ": cannot list folder: " + ec.message());
    std::sort(names.begin(), names.end());
    return names;
}

bool isPng(const uint8_t* p, size_t n) {
    static const uint8_t kMagic[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    return n >= sizeof kMagic && std::memcmp(p, kMagic, sizeof kMagic) == 0;
}

bool isJpeg(const uint8_t* p, size_t n) { return n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF; }

// Interleaved grey(+alpha) or RGB(A) to planar grey or RGB. Alpha is dropped, as PIL's
// convert("RGB") and TensorFlow's decode_png(channels=3) drop it; RGB to grey uses PIL's
// convert("L") weights and rounding (ITU-R 601: 0.299, 0.587, 0.114).
void toPlanar(const uint8_t* src, const InterleavedImage& in, int want, uint8_t* dst) {
    const size_t w = static_cast<size_t>(in.width);
    const size_t plane = w * static_cast<size_t>(in.height);
    const size_t step = static_cast<size_t>(in.channels);
    const bool colour = in.channels >= 3;
    for (size_t y = 0; y < static_cast<size_t>(in.height); ++y) {
        const uint8_t* row = src + y * in.stride;
        uint8_t* out = dst + y * w;
        if (want == 1 && colour) {
            for (size_t x = 0; x < w; ++x) {
                const uint8_t* p = row + x * step;
                out[x] = static_cast<uint8_t>((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
            }
        } else if (want == 1 || !colour) {
            for (size_t x = 0; x < w; ++x) out[x] = row[x * step];
            if (want == 3) {
                std::memcpy(out + plane, out, w);
                std::memcpy(out + 2 * plane, out, w);
            }
        } else {
            for (size_t x = 0; x < w; ++x)
                for (size_t c = 0; c < 3; ++c) out[c * plane + x] = row[x * step + c];
        }
    }
}

}  // namespace

ImageFolderIndex listImageFolder(const std::string& root) {
    std::error_code ec;
    const fs::file_status st = fs::status(root, ec);
    if (!fs::exists(st))
        throw DataError(root + ": image folder not found" + (ec ? ": " + ec.message() : std::string()));
    if (!fs::is_directory(st))
        throw DataError(root + ": not a folder (an image folder holds one sub-folder of images per class)");
    ImageFolderIndex index;
    index.classes = entries(root, true);
    if (index.classes.empty())
        throw DataError(root + ": no class sub-folders (an image folder holds one sub-folder of images per class)");
    for (size_t label = 0; label < index.classes.size(); ++label) {
        const fs::path folder = fs::path(root) / index.classes[label];
        for (const std::string& name : entries(folder, false)) {
            index.files.push_back((folder / name).string());
            index.labels.push_back(static_cast<int32_t>(label));
        }
    }
    if (index.files.empty())
        throw DataError(root + ": no image files in its " + std::to_string(index.classes.size()) + " class folders");
    return index;
}

void decodeImage(const uint8_t* data, size_t size, int want_channels, DecodedImage& out, const std::string& path) {
    if (want_channels != 0 && want_channels != 1 && want_channels != 3)
        throw std::invalid_argument("decodeImage: want_channels must be 0, 1 or 3, got " + std::to_string(want_channels));
    thread_local std::vector<uint8_t> scratch;
    InterleavedImage img;
    if (isPng(data, size))
        img = decodePngInterleaved(data, size, scratch, path);
    else if (isJpeg(data, size))
        img = decodeJpegInterleaved(data, size, want_channels, scratch, path);
    else
        throw DataError(path + ": not a PNG or JPEG image");
    const int channels = want_channels != 0 ? want_channels : (img.channels >= 3 ? 3 : 1);
    out.channels = channels;
    out.height = img.height;
    out.width = img.width;
    out.pixels.resize(static_cast<size_t>(channels) * static_cast<size_t>(img.height) * static_cast<size_t>(img.width));
    toPlanar(scratch.data(), img, channels, out.pixels.data());
    if (scratch.capacity() > kKeepScratchBytes) std::vector<uint8_t>().swap(scratch);
}

}  // namespace trainbench::engine
