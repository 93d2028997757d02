#include "profiler/store/processidentity.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>
#include <vector>

namespace trainbench::profiler {

namespace {

struct ProcStat {
    char state = '?';
    int64_t startTime = 0;
};

// Parses /proc/<pid>/stat. Field 2, the command name, is in parentheses and may itself hold
// spaces and ')', so fields are counted from the last ')'.
std::optional<ProcStat> readProcStat(const std::string& file) {
    std::ifstream in(file);
    std::string text;
    if (!in || !std::getline(in, text)) return std::nullopt;
    const auto close = text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(text.substr(close + 1));
    std::vector<std::string> tokens;  // tokens[0] is field 3 (state)
    for (std::string token; fields >> token && tokens.size() < 20;) tokens.push_back(token);
    if (tokens.size() < 20) return std::nullopt;
    ProcStat stat;
    stat.state = tokens[0].empty() ? '?' : tokens[0][0];
    try {
        stat.startTime = std::stoll(tokens[19]);  // field 22
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return stat;
}

std::optional<std::string> readBootId() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    if (!in || !std::getline(in, id) || id.empty()) return std::nullopt;
    return id;
}

std::string hostName() {
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

bool isZombie(char state) { return state == 'Z' || state == 'X' || state == 'x'; }

}  // namespace

ProcessIdentity ProcessIdentity::current() {
    ProcessIdentity self;
    self.host = hostName();
    self.pid = static_cast<int64_t>(getpid());
    if (auto stat = readProcStat("/proc/self/stat")) self.proc_start = stat->startTime;
    self.boot_id = readBootId();
    return self;
}

std::optional<int64_t> ProcessIdentity::startTimeOf(int64_t pid) {
    auto stat = readProcStat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat || isZombie(stat->state)) return std::nullopt;
    return stat->startTime;
}

bool ProcessIdentity::isAlive(int64_t pid, std::optional<int64_t> procStart) {
    if (pid <= 0) return false;
    auto stat = readProcStat("/proc/" + std::to_string(pid) + "/stat");
    if (stat) {
        if (isZombie(stat->state)) return false;
        // Same pid, other start time: the pid was reused by an unrelated process.
        return !procStart || *procStart == stat->startTime;
    }
    std::ifstream probe("/proc/self/stat");
    if (probe) return false;  // /proc works, the pid is simply gone
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace trainbench::profiler
