#include "app/run/paths.h"

#include <cstdlib>
#include <filesystem>

namespace trainbench::app {

std::string defaultRunStorePath() {
    if (const char* env = std::getenv("TRAINBENCH_DB"); env && *env) return env;
    std::filesystem::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
        base = xdg;
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        base = std::filesystem::path(home) / ".local" / "share";
    } else {
        base = std::filesystem::current_path();
    }
    return (base / "trainbench" / "runs.db").string();
}

}  // namespace trainbench::app
