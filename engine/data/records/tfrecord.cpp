#include "engine/data/records/tfrecord.h"

#include <stdexcept>

namespace trainbench::engine {

Compression parseCompression(const std::string& name) {
    if (name == "none") return Compression::kNone;
    if (name == "zlib") return Compression::kZlib;
    throw std::invalid_argument("unknown compression '" + name + "' (known: none, zlib)");
}

const char* compressionName(Compression c) { return c == Compression::kZlib ? "zlib" : "none"; }

}  // namespace trainbench::engine
