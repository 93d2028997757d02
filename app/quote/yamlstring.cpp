#include <cstdint>
#include <cstdio>

#include "app/quote/quote.h"
#include "engine/util/utf8.h"

namespace trainbench::app {

namespace {

// YAML 1.1 reads NEL, LS and PS as line breaks and refuses C0/C1 controls, DEL and the two
// non-characters; a BOM inside a document is not content either.
bool needsEscape(uint32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF;
}

}  // namespace

std::string yamlString(std::string_view value, std::string_view what) {
    std::string out = "\"";
    out.reserve(value.size() + 2);
    for (size_t i = 0; i < value.size();) {
        const engine::Utf8Sequence seq = engine::utf8SequenceAt(value, i);
        const uint32_t cp = seq.code_point;
        const size_t n = seq.bytes;
        if (!seq.valid)
            throw QuoteError(std::string(what) + " is not valid UTF-8 (at byte " + std::to_string(i) +
                             "), which a YAML manifest cannot hold");
        switch (cp) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (needsEscape(cp)) {
                    char esc[8];
                    std::snprintf(esc, sizeof esc, "\\u%04X", static_cast<unsigned>(cp));
                    out += esc;
                } else {
                    out.append(value.substr(i, n));
                }
        }
        i += n;
    }
    out += '"';
    return out;
}

}  // namespace trainbench::app
