#include "profiler/trace/jsonout.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace trainbench::profiler::jsonout {

namespace {

// The valid UTF-8 sequence at s[i]: its length (1 to 4) and true; or, if the bytes there are not
// one (truncated, overlong, a surrogate, above U+10FFFF, a stray continuation byte), the length of
// the longest start of one (at least 1) and false: that much becomes one U+FFFD, as browsers do.
std::pair<size_t, bool> utf8Sequence(std::string_view s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return {1, false};
    }
    for (size_t k = 1; k < n; ++k) {
        const bool ok = i + k < s.size() && byte(i + k) >= (k == 1 ? lo : 0x80) && byte(i + k) <= (k == 1 ? hi : 0xBF);
        if (!ok) return {k, false};
    }
    return {n, true};
}

}  // namespace

void appendString(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x80) {
            const auto [n, valid] = utf8Sequence(text, i);
            if (valid) out.append(text.substr(i, n));
            else out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            i += n;
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
