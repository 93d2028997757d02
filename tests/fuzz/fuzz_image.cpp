// decodeImage on arbitrary bytes, the first byte choosing the channels asked for (0, 1 or 3). One
// target for PNG and JPEG, since decodeImage is the one entry point the pipeline calls and picks
// the decoder by the file's first bytes: the seeds hold both formats, coverage keeps both alive.
// Every refusal must be a DataError naming the file (libpng and libjpeg errors longjmp back inside
// the decoders; ASan would see a skipped destructor as a leak); an image it decodes is within the
// limits and has exactly channels x height x width pixels.
#include <string>

#include "engine/data/sources/imagecodecs.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const int kChannels[] = {0, 1, 3};
    const int want = kChannels[data[0] % 3];
    DecodedImage img;
    try {
        decodeImage(data + 1, size - 1, want, img, "fuzz.img");
    } catch (const DataError& e) {
        if (std::string(e.what()).rfind("fuzz.img: ", 0) != 0) mismatch(std::string("message without the file: ") + e.what());
        return 0;
    }
    if (img.width <= 0 || img.height <= 0 || static_cast<uint64_t>(img.width) > kMaxImageSide ||
        static_cast<uint64_t>(img.height) > kMaxImageSide ||
        static_cast<uint64_t>(img.width) * static_cast<uint64_t>(img.height) > kMaxImagePixels)
        mismatch("an image outside the limits: " + std::to_string(img.width) + "x" + std::to_string(img.height));
    if ((want != 0 && img.channels != want) || (img.channels != 1 && img.channels != 3))
        mismatch("asked for " + std::to_string(want) + " channels, got " + std::to_string(img.channels));
    if (img.pixels.size() != static_cast<size_t>(img.channels) * static_cast<size_t>(img.height) * static_cast<size_t>(img.width))
        mismatch("pixel count disagrees with the size");
    return 0;
}
