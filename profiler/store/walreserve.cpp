#include "profiler/store/walreserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace trainbench::profiler {

bool WalReserve::keep() {
    // SQLite holds no POSIX locks on the WAL file itself (they are on the database and -shm), so
    // opening and closing it here cannot release any of its locks.
    const int fd = ::open(walPath_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return true;
    struct stat st {};
    bool kept = true;
    if (::fstat(fd, &st) == 0 &&
        ::fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(kWantedBytes)) != 0) {
        const int err = errno;
        if (err == ENOSPC || err == EDQUOT) {
            // Blocks already allocated stay; this asks only for what is missing of the smaller room.
            (void)::fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(kNeededBytes));
            error_ = err;
            kept = false;
        }
        // Anything else (EOPNOTSUPP on file systems without fallocate, ...): no room kept ahead, as
        // without this class.
    }
    ::close(fd);
    return kept;
}

}  // namespace trainbench::profiler
