#include "app/loadtest/servertiming.h"

#include <charconv>

namespace trainbench::app::loadtest {

namespace {

int64_t* fieldOf(ServerTiming& t, std::string_view key) {
    if (key == "queue_us") return &t.queueUs;
    if (key == "batch_us") return &t.batchUs;
    if (key == "decode_us") return &t.decodeUs;
    if (key == "compute_us") return &t.computeUs;
    if (key == "encode_us") return &t.encodeUs;
    if (key == "batch") return &t.batch;
    return nullptr;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

ServerTiming parseServerTiming(std::string_view value, std::string& error) {
    ServerTiming t;
    error.clear();
    while (!value.empty()) {
        const size_t comma = value.find(',');
        const std::string_view item = trimmed(value.substr(0, comma));
        value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            error = "item '" + std::string(item) + "' is not key=value";
            return {};
        }
        int64_t* field = fieldOf(t, trimmed(item.substr(0, eq)));
        if (!field) continue;
        const std::string_view text = trimmed(item.substr(eq + 1));
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc{} || end != text.data() + text.size() || v < 0) {
            error = "field '" + std::string(trimmed(item.substr(0, eq))) + "': '" + std::string(text) +
                    "' is not a whole non-negative number";
            return {};
        }
        *field = v;
    }
    t.present = true;
    return t;
}

}  // namespace trainbench::app::loadtest
