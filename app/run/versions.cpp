#include "app/run/versions.h"

#include <dnnl.h>
#include <sqlite3.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

namespace trainbench::app {

std::string trainbenchVersion() { return TRAINBENCH_VERSION; }

std::vector<std::pair<std::string, std::string>> libraryVersions() {
    const dnnl_version_t* d = dnnl_version();
    std::string onednn = std::to_string(d->major) + "." + std::to_string(d->minor) + "." + std::to_string(d->patch);
    const std::string hash = d->hash ? d->hash : "";
    if (!hash.empty() && hash != "N/A") onednn += " (" + hash + ")";
    const std::string json = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                             std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                             std::to_string(NLOHMANN_JSON_VERSION_PATCH);
    return {{"oneDNN", onednn}, {"SQLite", sqlite3_libversion()}, {"zlib", zlibVersion()}, {"nlohmann-json", json}};
}

}  // namespace trainbench::app
