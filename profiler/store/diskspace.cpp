#include "profiler/store/diskspace.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace trainbench::profiler {

namespace {

std::string folderOf(const std::string& path) {
    const std::filesystem::path p = std::filesystem::absolute(path);
    std::error_code ec;
    return std::filesystem::is_directory(p, ec) ? p.string() : p.parent_path().string();
}

}  // namespace

std::optional<uint64_t> freeBytesAt(const std::string& path) {
    struct statvfs s {};
    if (::statvfs(folderOf(path).c_str(), &s) != 0) return std::nullopt;
    return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
}

std::string diskFullDetail(const std::string& path, int systemErrno) {
    if (systemErrno != ENOSPC && systemErrno != EDQUOT) return {};
    std::string detail = std::strerror(systemErrno);
    if (const std::optional<uint64_t> free = freeBytesAt(path))
        detail += "; " + std::to_string(*free / 1024) + " KiB free on the file system of " + folderOf(path);
    return detail;
}

}  // namespace trainbench::profiler
