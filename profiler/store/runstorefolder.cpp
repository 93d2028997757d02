#include "profiler/store/runstorefolder.h"

#include <nlohmann/json.hpp>

#include "profiler/store/pathkeys.h"

namespace trainbench::profiler {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHere = "./";

// Where a path may begin in a description: at its start, or after a character that no path in
// trainbench's descriptions runs on from ("from /a/b", "(/a/b)", "'/a/b'", "x=/a/b").
bool beginsWord(const std::string& text, size_t at) {
    if (at == 0) return true;
    const char c = text[at - 1];
    return c == ' ' || c == '\t' || c == '\n' || c == '(' || c == '\'' || c == '"' || c == '=' || c == ',';
}

// Every `from` that begins a word replaced by `to`.
std::string replaceWordStarts(const std::string& text, const std::string& from, const std::string& to) {
    std::string out;
    size_t done = 0;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + from.size())) {
        if (!beginsWord(text, at)) continue;
        out.append(text, done, at - done).append(to);
        done = at + from.size();
    }
    return done == 0 ? text : out.append(text, done, std::string::npos);
}

// The experiment's path values mapped through `map`; the text itself when none changes.
template <typename Map>
std::string mapConfig(const std::string& text, Map map) {
    nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) return text;
    bool changed = false;
    for (const std::string& key : experimentPathKeys()) {
        std::string pointer = "/" + key;
        for (char& c : pointer)
            if (c == '.') c = '/';
        const nlohmann::json::json_pointer at(pointer);
        if (!config.contains(at) || !config[at].is_string()) continue;
        const std::string before = config[at].get<std::string>();
        std::string after = map(before);
        if (after == before) continue;
        config[at] = std::move(after);
        changed = true;
    }
    return changed ? config.dump() : text;
}

}  // namespace

RunStoreFolder::RunStoreFolder(const std::string& storePath) {
    std::error_code ec;
    fs::path file = fs::absolute(storePath, ec);
    if (ec) file = storePath;
    folder_ = file.lexically_normal().parent_path();
    prefix_ = folder_.string();
    if (prefix_.empty() || prefix_.back() != '/') prefix_ += '/';
}

std::string RunStoreFolder::recorded(const std::string& path) const {
    const fs::path p(path);
    if (path.empty() || !p.is_absolute() || !folder_.is_absolute()) return path;
    const fs::path inside = p.lexically_normal().lexically_relative(folder_);
    if (inside.empty() || *inside.begin() == "..") return path;
    return inside == "." ? std::string(kHere) : std::string(kHere) + inside.generic_string();
}

std::string RunStoreFolder::resolved(const std::string& value) const {
    if (value.rfind(kHere, 0) != 0) return value;
    const std::string inside = value.substr(kHere.size());
    return inside.empty() ? folder_.string() : (folder_ / inside).lexically_normal().string();
}

std::string RunStoreFolder::recordedText(const std::string& text) const {
    return replaceWordStarts(text, prefix_, std::string(kHere));
}

std::string RunStoreFolder::resolvedText(const std::string& text) const {
    return replaceWordStarts(text, std::string(kHere), prefix_);
}

std::string RunStoreFolder::recordedConfig(const std::string& json) const {
    return mapConfig(json, [this](const std::string& v) { return recorded(v); });
}

std::string RunStoreFolder::resolvedConfig(const std::string& json) const {
    // Most stored experiments name no path inside the store: no need to parse them.
    if (json.find("\"./") == std::string::npos) return json;
    return mapConfig(json, [this](const std::string& v) { return resolved(v); });
}

std::string RunStoreFolder::recordedAttribute(const std::string& key, const std::string& value) const {
    switch (attributeKind(key)) {
    case AttributeKind::Path: return recorded(value);
    case AttributeKind::TextWithPaths: return recordedText(value);
    case AttributeKind::Plain: break;
    }
    return value;
}

std::string RunStoreFolder::resolvedAttribute(const std::string& key, const std::string& value) const {
    switch (attributeKind(key)) {
    case AttributeKind::Path: return resolved(value);
    case AttributeKind::TextWithPaths: return resolvedText(value);
    case AttributeKind::Plain: break;
    }
    return value;
}

}  // namespace trainbench::profiler
