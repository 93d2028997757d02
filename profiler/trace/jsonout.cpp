#include "profiler/trace/jsonout.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "engine/util/utf8.h"

namespace trainbench::profiler::jsonout {

void appendString(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x80) {
            const engine::Utf8Sequence seq = engine::utf8SequenceAt(text, i);
            if (seq.valid) out.append(text.substr(i, seq.bytes));
            else out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            i += seq.bytes;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {  // DEL is valid JSON, but some trace readers reject it raw
                    out += "\\u00";
                    out += kHex[c >> 4];
                    out += kHex[c & 0xF];
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    out += '"';
}

void appendMicros(std::string& out, int64_t nanoseconds) {
    // |INT64_MIN| does not fit an int64_t; go through the unsigned magnitude.
    uint64_t magnitude = static_cast<uint64_t>(nanoseconds);
    if (nanoseconds < 0) {
        out += '-';
        magnitude = ~magnitude + 1;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, magnitude / 1000);
    out.append(buf, r.ptr);
    const auto frac = static_cast<unsigned>(magnitude % 1000);
    out += '.';
    out += static_cast<char>('0' + frac / 100);
    out += static_cast<char>('0' + frac / 10 % 10);
    out += static_cast<char>('0' + frac % 10);
}

void appendInt(std::string& out, int64_t value) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

void appendDouble(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

}  // namespace trainbench::profiler::jsonout
