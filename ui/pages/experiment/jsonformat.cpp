#include "ui/pages/experiment/jsonformat.h"

#include <iterator>

namespace trainbench::ui {

using nlohmann::ordered_json;

namespace {

constexpr std::size_t kLineLimit = 100;

std::string scalar(const ordered_json& v) {
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// {"type": "conv2d", "filters": 32}: with spaces, as in the docs, unlike dump(-1).
std::string inlineText(const ordered_json& v) {
    if (v.is_object()) {
        std::string out = "{";
        for (auto it = v.begin(); it != v.end(); ++it)
            out += (it == v.begin() ? "" : ", ") + scalar(it.key()) + ": " + inlineText(*it);
        return out + "}";
    }
    if (v.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + inlineText(v[i]);
        return out + "]";
    }
    return scalar(v);
}

void write(const ordered_json& v, int depth, std::string& out) {
    const std::string pad(static_cast<std::size_t>(2 * (depth + 1)), ' ');
    const std::string close(static_cast<std::size_t>(2 * depth), ' ');
    if (v.is_object() && !v.empty()) {
        out += "{\n";
        for (auto it = v.begin(); it != v.end(); ++it) {
            out += pad + scalar(it.key()) + ": ";
            write(*it, depth + 1, out);
            out += std::next(it) == v.end() ? "\n" : ",\n";
        }
        out += close + "}";
        return;
    }
    if (v.is_array() && !v.empty()) {
        const std::string flat = inlineText(v);
        bool scalars = true;
        for (const ordered_json& e : v) scalars = scalars && !e.is_structured();
        if (scalars && flat.size() + pad.size() <= kLineLimit) {
            out += flat;
            return;
        }
        // One element per line, each on one line if it fits (layers).
        out += "[\n";
        for (std::size_t i = 0; i < v.size(); ++i) {
            out += pad;
            const std::string element = inlineText(v[i]);
            if (element.size() + pad.size() <= kLineLimit)
                out += element;
            else
                write(v[i], depth + 1, out);
            out += i + 1 == v.size() ? "\n" : ",\n";
        }
        out += close + "]";
        return;
    }
    out += inlineText(v);
}

}  // namespace

std::string formatExperimentJson(const ordered_json& document) {
    std::string out;
    write(document, 0, out);
    return out + "\n";
}

}  // namespace trainbench::ui
