#include "engine/util/jsonlimits.h"
#include "engine/util/keypath.h"

#include <vector>

namespace trainbench::engine {
namespace {

// A key longer than this is shortened in messages: the path is for finding the place, not a copy.
constexpr std::size_t kMaxKeyInPath = 64;

// One open { or [ and where the scan is inside it.
struct Level {
    bool array;
    std::size_t index = 0;  // arrays: the element being read
    std::string_view key;   // objects: the last key read
};

std::string pathOf(const std::vector<Level>& levels) {
    std::string path;
    for (const Level& l : levels) {
        if (l.array) {
            path = keyPathElement(path, l.index);
        } else {
            // The key as written in a text not parsed yet: it may hold anything (a newline, bytes
            // that are not UTF-8), and the message is one line of text. Only printable ASCII is kept.
            std::string key;
            for (const char c : l.key.substr(0, kMaxKeyInPath)) key += c >= 0x20 && c < 0x7F ? c : '?';
            if (l.key.size() > kMaxKeyInPath) key += "...";
            path = keyPathMember(path, key);
        }
    }
    return path;
}

}  // namespace

std::optional<JsonLimitViolation> checkJsonLimits(std::string_view text, const JsonLimits& limits) {
    if (text.size() > limits.maxBytes)
        return JsonLimitViolation{JsonLimitViolation::Limit::Size, limits.maxBytes, "",
                                  std::to_string(text.size()) + " bytes, over the limit of " +
                                      std::to_string(limits.maxBytes) + " bytes"};
    std::vector<Level> levels;
    bool expectKey = false;  // in an object, after { or ','
    for (std::size_t i = 0; i < text.size(); ++i) {
        switch (text[i]) {
            case '"': {
                const std::size_t start = i + 1;
                for (++i; i < text.size() && text[i] != '"'; ++i)
                    if (text[i] == '\\') ++i;
                if (expectKey && !levels.empty() && !levels.back().array)
                    levels.back().key = text.substr(start, std::min(i, text.size()) - start);
                expectKey = false;
                break;
            }
            case '{':
            case '[':
                if (levels.size() >= limits.maxDepth)
                    return JsonLimitViolation{JsonLimitViolation::Limit::Depth, i, pathOf(levels),
                                              "nesting deeper than " + std::to_string(limits.maxDepth) +
                                                  " levels of { and ["};
                levels.push_back({text[i] == '[', 0, {}});
                expectKey = text[i] == '{';
                break;
            case '}':
            case ']':
                if (!levels.empty()) levels.pop_back();
                expectKey = false;
                break;
            case ',':
                if (!levels.empty()) {
                    if (levels.back().array) ++levels.back().index;
                    expectKey = !levels.back().array;
                }
                break;
            default: break;
        }
    }
    return std::nullopt;
}

std::string describeByteOffset(std::string_view text, std::size_t offset) {
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min(offset, text.size());
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
}

}  // namespace trainbench::engine
