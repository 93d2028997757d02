#pragma once
// A real, size-limited file system for disk-full tests: a tmpfs of a few megabytes mounted on a
// fresh folder, so that writes fail with ENOSPC (SQLite: SQLITE_FULL) the way a full disk does, not
// with EFBIG as under RLIMIT_FSIZE. Unmounted and removed when the object goes, also when an
// assertion ends the test early. Mounting needs CAP_SYS_ADMIN; where it fails (a sandbox, a
// container without it) error() says why, for GTEST_SKIP.
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trainbench::testing {

class SmallFileSystem {
public:
    explicit SmallFileSystem(uint64_t bytes) {
        std::string folder = (std::filesystem::temp_directory_path() / "trainbench-full-XXXXXX").string();
        if (::mkdtemp(folder.data()) == nullptr) {
            error_ = "mkdtemp: " + std::string(std::strerror(errno));
            return;
        }
        path_ = folder;
        const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
        if (::mount("tmpfs", folder.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
            error_ = "mount -t tmpfs -o " + options + " tmpfs " + folder + ": " + std::strerror(errno);
            return;
        }
        mounted_ = true;
    }
    ~SmallFileSystem() {
        // Lazily if something still holds a file open: the folder goes either way.
        if (mounted_ && ::umount2(path_.c_str(), 0) != 0) ::umount2(path_.c_str(), MNT_DETACH);
        std::error_code ignored;
        if (!path_.empty()) std::filesystem::remove(path_, ignored);
    }
    SmallFileSystem(const SmallFileSystem&) = delete;
    SmallFileSystem& operator=(const SmallFileSystem&) = delete;

    bool mounted() const { return mounted_; }
    const std::string& error() const { return error_; }
    const std::filesystem::path& path() const { return path_; }

    uint64_t freeBytes() const {
        struct statvfs s {};
        return ::statvfs(path_.c_str(), &s) == 0 ? static_cast<uint64_t>(s.f_bavail) * s.f_frsize : 0;
    }

    // Another program's data: a file that takes all but `leave` bytes (rounded to pages).
    void fillLeaving(uint64_t leave) {
        const uint64_t available = freeBytes();
        const uint64_t bytes = available > leave ? available - leave : 0;
        std::ofstream out(path_ / "filler", std::ios::binary | std::ios::app);
        const std::vector<char> block(64 * 1024, 'x');
        for (uint64_t done = 0; done < bytes; done += block.size())
            out.write(block.data(), static_cast<std::streamsize>(std::min<uint64_t>(block.size(), bytes - done)));
    }
    // The user frees space.
    void removeFiller() { std::filesystem::remove(path_ / "filler"); }

    // Every file under the mount but the filler, for "nothing half-written was left".
    std::vector<std::string> files() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::recursive_directory_iterator(path_))
            if (e.is_regular_file() && e.path().filename() != "filler")
                out.push_back(std::filesystem::relative(e.path(), path_).string());
        return out;
    }

private:
    std::filesystem::path path_;
    std::string error_;
    bool mounted_ = false;
};

}  // namespace trainbench::testing
