#pragma once
// Size and nesting limits for JSON text from files and command lines, checked before it is parsed.
// nlohmann's parser itself builds a document of any depth, but copying, comparing, printing or
// validating one recurses once per level, so a file of a million '[' would overflow the stack
// later; and a file of gigabytes would be read and parsed whole. One pass, no allocation beyond
// the key path of the deepest place reached.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trainbench::engine {

struct JsonLimits {
    std::size_t maxBytes;  // the whole text
    std::size_t maxDepth;  // levels of { and [; the top-level object is level 1
};

// Where a text passed a limit.
struct JsonLimitViolation {
    enum class Limit { Size, Depth } limit;
    std::size_t offset;   // 0-based byte offset: the first byte over the size, the { or [ one level too deep
    std::string keyPath;  // of the value there, "sweep.seed[0][0]" ("" for the top level or the size)
    std::string message;  // "nesting deeper than 32 levels of { and [" / "12345 bytes, over the limit of 1024"
};

// The first limit `text` passes, or nullopt. Only well-formed parts of the text are understood
// (strings and escapes as JSON has them); whatever the parser would reject later cannot hide
// nesting from this scan, since the scan agrees with the parser on every prefix the parser accepts.
std::optional<JsonLimitViolation> checkJsonLimits(std::string_view text, const JsonLimits& limits);

// "byte 57 (line 3, column 12)": lines and columns from 1, columns in bytes.
std::string describeByteOffset(std::string_view text, std::size_t offset);

}  // namespace trainbench::engine
