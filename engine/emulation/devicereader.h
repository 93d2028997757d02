#pragma once
// One device entry of the catalog (devices[i]) read into a DeviceSpec: units converted to SI, every
// figure checked for type, range and a source, keys that belong to another kind of device rejected.
// Internal to devicecatalog.cpp.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/emulation/devicecatalog.h"

namespace trainbench::engine::catalog {

// The device at `path` ("devices[3]"). Problems are appended to `issues`; the spec returned is only
// meaningful when none were added.
DeviceSpec readDevice(const nlohmann::json& node, const std::string& path, std::vector<CatalogIssue>& issues);

}  // namespace trainbench::engine::catalog
