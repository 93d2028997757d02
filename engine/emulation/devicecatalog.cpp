#include "engine/emulation/devicecatalog.h"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/emulation/catalogreader.h"
#include "engine/emulation/devicereader.h"
#include "engine/util/cappedfile.h"

namespace trainbench::engine {

// resources/devices.json as text, generated into the build tree by engine/CMakeLists.txt.
namespace embedded {
extern const char kDeviceCatalogJson[];
}

namespace {

constexpr int kFormat = 1;

std::string joinIssues(const std::string& source, const std::vector<CatalogIssue>& issues) {
    std::string out;
    for (const CatalogIssue& issue : issues) {
        if (!out.empty()) out += '\n';
        out += source + ": " + (issue.path.empty() ? "" : issue.path + ": ") + issue.message;
    }
    return out;
}

// A syntax error located as "byte N (line L, column C)": N counts from 0, lines and columns from 1.
CatalogIssue syntaxIssue(const std::string& text, const nlohmann::json::parse_error& e) {
    const std::size_t offset = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size()) : 0;
    // nlohmann's message repeats its own location ("[json.exception.parse_error.101] parse error at
    // line 3, column 5: ..."); keep what follows it.
    std::string what = e.what();
    const std::size_t at = what.find("column ");
    const std::size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return {describeByteOffset(text, offset), "invalid JSON: " + what};
}

// Text over kDeviceCatalogLimits, refused before it is parsed.
std::optional<CatalogIssue> limitIssue(const std::string& text) {
    const auto v = checkJsonLimits(text, kDeviceCatalogLimits);
    if (!v) return std::nullopt;
    if (v->limit == JsonLimitViolation::Limit::Size) return CatalogIssue{"", "is " + v->message};
    return CatalogIssue{describeByteOffset(text, v->offset),
                        v->message + (v->keyPath.empty() ? std::string() : " (at " + v->keyPath + ")")};
}

}  // namespace

DeviceCatalogError::DeviceCatalogError(std::string source, std::vector<CatalogIssue> issues)
    : std::runtime_error(joinIssues(source, issues)), source_(std::move(source)), issues_(std::move(issues)) {}

DeviceCatalog DeviceCatalog::load(const std::string& path) {
    std::string error;
    const std::optional<std::string> text = readCappedFile(path, kDeviceCatalogLimits.maxBytes, &error);
    if (!text) {
        if (error.rfind("cannot open", 0) == 0) error = "cannot open the device catalog for reading" + error.substr(11);
        throw DeviceCatalogError(path, {{"", error}});
    }
    return parse(*text, path);
}

DeviceCatalog DeviceCatalog::parse(const std::string& text, const std::string& sourceName) {
    if (const auto issue = limitIssue(text)) throw DeviceCatalogError(sourceName, {*issue});
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw DeviceCatalogError(sourceName, {syntaxIssue(text, e)});
    }
    std::vector<CatalogIssue> issues;
    catalog::ObjectReader top(root, "", {"format", "about", "devices"}, issues);
    DeviceCatalog catalog;
    catalog.source_ = sourceName;
    if (const nlohmann::json* format = top.required("format", "the catalog format, 1")) {
        if (!format->is_number_integer() || format->get<long long>() != kFormat)
            issues.push_back({"format", "this build reads catalog format " + std::to_string(kFormat) + ", got " +
                                            catalog::describe(*format)});
    }
    if (top.has("about") && !top.required("about", "")->is_string())
        issues.push_back({"about", "expected a string (a description for people), got " +
                                       catalog::describe(*top.required("about", ""))});
    if (const nlohmann::json* devices = top.required("devices", "the list of devices")) {
        if (!devices->is_array() || devices->empty()) {
            issues.push_back({"devices", "expected a non-empty array of devices, got " + catalog::describe(*devices)});
        } else {
            std::map<std::string, std::string> firstPath;  // id -> where it first appeared
            for (std::size_t i = 0; i < devices->size(); ++i) {
                const std::string path = "devices[" + std::to_string(i) + "]";
                const std::size_t before = issues.size();
                DeviceSpec spec = catalog::readDevice((*devices)[i], path, issues);
                if (!spec.id.empty()) {
                    const auto [it, inserted] = firstPath.emplace(spec.id, path);
                    if (!inserted)
                        issues.push_back(
                            {path + ".id", "duplicate id '" + spec.id + "' (first at " + it->second + ")"});
                }
                if (issues.size() == before) catalog.devices_.push_back(std::move(spec));
            }
        }
    }
    top.finish();
    if (!issues.empty()) throw DeviceCatalogError(sourceName, std::move(issues));
    return catalog;
}

const char* DeviceCatalog::builtinText() { return embedded::kDeviceCatalogJson; }

const DeviceCatalog& DeviceCatalog::builtin() {
    static const DeviceCatalog catalog = parse(builtinText(), "<builtin>/resources/devices.json");
    return catalog;
}

const DeviceSpec* DeviceCatalog::find(const std::string& id) const {
    for (const DeviceSpec& d : devices_)
        if (d.id == id) return &d;
    return nullptr;
}

const DeviceSpec& DeviceCatalog::get(const std::string& id) const {
    if (const DeviceSpec* d = find(id)) return *d;
    std::string message = "unknown device '" + id + "' in " + source_ + "; known: " + catalog::quotedList(ids());
    if (const auto match = catalog::closestMatch(id, ids())) message += "; did you mean '" + *match + "'?";
    throw std::invalid_argument(message);
}

std::vector<std::string> DeviceCatalog::ids() const {
    std::vector<std::string> out;
    for (const DeviceSpec& d : devices_) out.push_back(d.id);
    return out;
}

}  // namespace trainbench::engine
