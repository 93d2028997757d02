#pragma once
// Devices of the built-in catalog by id, as the engine's emulation tests read them.

#include <string>

#include "engine/emulation/devicecatalog.h"

namespace trainbench::engine::test {

inline constexpr double kGiB = 1073741824.0;

inline const DeviceSpec& device(const std::string& id) { return DeviceCatalog::builtin().get(id); }

}  // namespace trainbench::engine::test
