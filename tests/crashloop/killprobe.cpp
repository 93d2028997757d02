#include "tests/crashloop/killprobe.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "engine/io/tempfiles.h"

namespace trainbench::crashloop {

namespace fs = std::filesystem;

namespace {

// SQLite's WAL locks are fcntl byte locks on the -shm file: byte 120 the writer's, 121 the
// checkpointer's (WALINDEX_LOCK_OFFSET in sqlite3.c).
constexpr long kWalWriteLockByte = 120;
constexpr long kWalCheckpointLockByte = 121;

// State letter of a thread's /proc stat line ('R', 'S', 'D', 'T', 't', 'Z', ...); 0 if gone.
char threadState(const fs::path& stat) {
    std::ifstream in(stat);
    std::string line;
    if (!std::getline(in, line)) return 0;
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

// Waits until every thread of pid has stopped; false when the process is gone or a zombie.
bool waitStopped(pid_t pid) {
    const fs::path tasks = "/proc/" + std::to_string(pid) + "/task";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        std::error_code ec;
        bool all = true, any = false;
        for (const fs::directory_entry& task : fs::directory_iterator(tasks, ec)) {
            const char state = threadState(task.path() / "stat");
            if (state == 'Z' || state == 'X') return false;
            if (state == 0) continue;
            any = true;
            if (state != 'T' && state != 't') all = false;
        }
        if (ec || !any) return false;
        if (all) return true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;  // a thread stuck in the kernel (a long fsync): probe what can be seen anyway
}

// Whether the process has the checkpoint's temporary file open: the atomic writer's unnamed file
// in the checkpoint's folder (O_TMPFILE; /proc shows "<folder>/#<inode> (deleted)") or, once linked,
// its named one (engine/io/tempfiles.h).
bool holdsCheckpointTemp(pid_t pid, const std::string& checkpoint) {
    const fs::path path = fs::absolute(checkpoint);
    const std::string folder = path.parent_path().string() + "/", named = "." + path.filename().string() + ".";
    std::error_code ec;
    for (const fs::directory_entry& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code rec;
        const std::string target = fs::read_symlink(fd.path(), rec).string();
        if (rec || target.rfind(folder, 0) != 0) continue;
        const std::string name = target.substr(folder.size());
        pid_t writer = 0;
        if (name.size() > 1 && name[0] == '#' && name.find('/') == std::string::npos) return true;
        if (name.rfind(named, 0) == 0 && engine::isTempFileName(name, &writer)) return true;
    }
    return false;
}

// /proc/locks lines: "1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 120 120".
bool holdsLockByte(pid_t pid, ino_t inode, long byte) {
    std::ifstream in("/proc/locks");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string id, kind, mode, access, device, start, end;
        long owner = 0;
        s >> id >> kind >> mode >> access >> owner >> device >> start >> end;
        if (!s || owner != pid || kind != "POSIX") continue;
        const auto colon = device.rfind(':');
        if (colon == std::string::npos || std::stoull(device.substr(colon + 1)) != inode) continue;
        const long first = std::stol(start);
        const long last = end == "EOF" ? LONG_MAX : std::stol(end);
        if (first <= byte && byte <= last) return true;
    }
    return false;
}

}  // namespace

std::string KillProbe::text() const {
    if (exited) return "exited";
    std::string out;
    auto add = [&](const char* what) { out += (out.empty() ? "" : "+") + std::string(what); };
    if (checkpointWrite) add("checkpoint");
    if (storeCommit) add("store-commit");
    if (storeWalCheckpoint) add("store-wal-checkpoint");
    return out.empty() ? "-" : out;
}

namespace {

// Stops pid and looks; false when it is gone.
bool stopAndProbe(pid_t pid, const std::string& db, const std::string& checkpoint, KillProbe& probe) {
    probe = KillProbe{};
    if (::kill(pid, SIGSTOP) != 0 || !waitStopped(pid)) {
        probe.exited = true;
        return false;
    }
    probe.checkpointWrite = holdsCheckpointTemp(pid, checkpoint);
    struct stat shm {};
    if (::stat((db + "-shm").c_str(), &shm) == 0) {
        probe.storeCommit = holdsLockByte(pid, shm.st_ino, kWalWriteLockByte);
        probe.storeWalCheckpoint = holdsLockByte(pid, shm.st_ino, kWalCheckpointLockByte);
    }
    return true;
}

}  // namespace

KillProbe stopProbeAndKill(pid_t pid, const std::string& db, const std::string& checkpoint, Aim aim) {
    KillProbe probe;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::minstd_rand random(static_cast<unsigned>(pid));
    while (stopAndProbe(pid, db, checkpoint, probe)) {
        const bool hit = aim == Aim::Anything || (aim == Aim::StoreCommit && probe.storeCommit) ||
                         (aim == Aim::CheckpointWrite && probe.checkpointWrite);
        if (hit || std::chrono::steady_clock::now() > deadline) break;
        // Not yet: let it run a moment (0-2 ms) and look again.
        ::kill(pid, SIGCONT);
        std::this_thread::sleep_for(std::chrono::microseconds(random() % 2000));
    }
    ::kill(pid, SIGKILL);
    return probe;
}

}  // namespace trainbench::crashloop
