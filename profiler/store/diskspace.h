#pragma once
// What a full disk looks like in a store error: SQLite says only "database or disk is full"; the
// user needs to hear which file system is full and how much is left on it.
#include <cstdint>
#include <optional>
#include <string>

namespace trainbench::profiler {

// Bytes an unprivileged process may still write on the file system holding `path` (a file or a
// folder; a missing file counts as its folder). nullopt when it cannot be asked.
std::optional<uint64_t> freeBytesAt(const std::string& path);

// For an operating-system error code of a failed write next to `path`: when it is ENOSPC or EDQUOT,
// "No space left on device; 12 KiB free on the file system of /data/trainbench"; otherwise empty.
std::string diskFullDetail(const std::string& path, int systemErrno);

}  // namespace trainbench::profiler
