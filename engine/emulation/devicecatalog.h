#pragma once
// The device catalog: the devices an emulated run can be timed and priced on, read from a JSON file
// (resources/devices.json, format in docs/devices.md). The shipped file is compiled into the binary
// (builtin()), so the CLI works from any directory; a user's edited copy is loaded by path.
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/emulation/devicespec.h"
#include "engine/util/jsonlimits.h"

namespace trainbench::engine {

// What a catalog may be (docs/devices.md, "Limits"): the shipped one is 26 KB and 5 levels deep.
inline constexpr JsonLimits kDeviceCatalogLimits{1u << 20, 32};

// One thing wrong with a catalog: where (a key path such as "devices[3].memory.bandwidth_gbs", or
// "byte 812 (line 30, column 7)" for a syntax error or nesting too deep) and what was expected.
struct CatalogIssue {
    std::string path;
    std::string message;
};

// Every issue of a catalog, not just the first. what() is one line per issue:
// "<source>: <path>: <message>".
class DeviceCatalogError : public std::runtime_error {
public:
    DeviceCatalogError(std::string source, std::vector<CatalogIssue> issues);
    const std::string& source() const { return source_; }
    const std::vector<CatalogIssue>& issues() const { return issues_; }

private:
    std::string source_;
    std::vector<CatalogIssue> issues_;
};

class DeviceCatalog {
public:
    // Reads and validates the file at `path`; DeviceCatalogError (source = path) on any problem,
    // including a file that cannot be read or is over kDeviceCatalogLimits.
    static DeviceCatalog load(const std::string& path);
    // Validates catalog text; `sourceName` names it in errors (a file name).
    static DeviceCatalog parse(const std::string& text, const std::string& sourceName);
    // The shipped resources/devices.json, embedded at build time; parsed once.
    static const DeviceCatalog& builtin();
    // The embedded text itself (what builtin() parsed).
    static const char* builtinText();

    // The device with this id, or null.
    const DeviceSpec* find(const std::string& id) const;
    // The device with this id; std::invalid_argument listing the known ids (and the closest one)
    // otherwise.
    const DeviceSpec& get(const std::string& id) const;
    // Ids in file order.
    std::vector<std::string> ids() const;
    const std::vector<DeviceSpec>& devices() const { return devices_; }
    // Where the catalog came from ("<builtin>" or the path / source name given).
    const std::string& source() const { return source_; }

private:
    std::string source_;
    std::vector<DeviceSpec> devices_;
};

}  // namespace trainbench::engine
