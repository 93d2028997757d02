#include "engine/io/tempfiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

namespace trainbench::engine {

namespace {

constexpr std::string_view kMarker = ".trainbench-tmp-";
constexpr size_t kNameBytesKept = 200;  // + marker and numbers stays under NAME_MAX (255)

bool allDigits(std::string_view s) {
    if (s.empty() || s.size() > 10) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

bool processAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Opens the file without following a link or blocking on a pipe, and takes its lock if nobody has it.
bool unlockedRegularFile(int dirFd, const char* name) {
    const int fd = ::openat(dirFd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    struct stat st {};
    const bool stale = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);  // drops the lock again
    return stale;
}

}  // namespace

std::string tempFileName(std::string_view name) {
    static std::atomic<unsigned> counter{0};
    std::string out = ".";
    out += name.substr(0, kNameBytesKept);
    out += kMarker;
    out += std::to_string(::getpid());
    out += '-';
    out += std::to_string(counter++);
    return out;
}

bool isTempFileName(std::string_view entry, pid_t* pid) {
    if (entry.size() < 2 || entry[0] != '.') return false;
    const size_t marker = entry.rfind(kMarker);
    if (marker == std::string_view::npos || marker < 1) return false;
    const std::string_view numbers = entry.substr(marker + kMarker.size());
    const size_t dash = numbers.find('-');
    if (dash == std::string_view::npos) return false;
    const std::string_view p = numbers.substr(0, dash), n = numbers.substr(dash + 1);
    if (!allDigits(p) || !allDigits(n)) return false;
    const long long value = std::stoll(std::string(p));
    if (value <= 0 || value > INT32_MAX) return false;
    if (pid) *pid = static_cast<pid_t>(value);
    return true;
}

void sweepStaleTempFiles(int dirFd, const std::string& folder) {
    struct stat self {};
    if (::fstat(dirFd, &self) != 0) return;
    {
        static std::mutex mutex;
        static std::set<std::tuple<std::string, dev_t, ino_t>> swept;
        std::lock_guard<std::mutex> lock(mutex);
        if (!swept.emplace(folder, self.st_dev, self.st_ino).second) return;
    }
    // readdir on a duplicate, so that the caller's descriptor keeps its offset and stays open.
    const int fd = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return;
    }
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(dir)) {
        pid_t pid = 0;
        if (!isTempFileName(e->d_name, &pid) || pid == ::getpid() || processAlive(pid)) continue;
        if (unlockedRegularFile(dirFd, e->d_name)) stale.emplace_back(e->d_name);
    }
    ::closedir(dir);
    for (const std::string& name : stale) ::unlinkat(dirFd, name.c_str(), 0);
}

}  // namespace trainbench::engine
