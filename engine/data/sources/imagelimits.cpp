#include "engine/data/sources/imagecodecs.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

void checkImageSize(const std::string& path, const char* format, uint64_t width, uint64_t height) {
    const std::string image = path + ": " + format + " of " + std::to_string(width) + "x" + std::to_string(height) + " pixels";
    if (width > kMaxImageSide || height > kMaxImageSide)
        throw DataError(image + ": its " + (width > kMaxImageSide ? "width" : "height") + " is over the limit of " +
                        std::to_string(kMaxImageSide) + " pixels per side");
    if (width * height > kMaxImagePixels)
        throw DataError(image + " is over the limit of " + std::to_string(kMaxImagePixels) + " pixels per image");
}

}  // namespace trainbench::engine
