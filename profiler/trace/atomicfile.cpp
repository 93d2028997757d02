#include "profiler/trace/atomicfile.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "profiler/trace/traceerror.h"

namespace trainbench::profiler {

namespace {
// Some file systems cannot sync (or not a folder); that is no failure of the data written.
bool syncUnsupported(int err) { return err == EINVAL || err == EROFS || err == ENOTSUP; }
}  // namespace

AtomicFile::AtomicFile(std::string target, std::string what) : target_(std::move(target)), what_(std::move(what)) {
    // Unique within the process by the counter, across processes by the pid; O_EXCL settles the
    // rest (a file left behind by a crashed process whose pid was reused).
    static std::atomic<unsigned> counter{0};
    for (;;) {
        tempPath_ = target_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
        fd_ = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ >= 0) break;
        const int err = errno;
        if (err != EEXIST && err != EINTR) fail("cannot create the temporary file " + tempPath_, err);
    }
    buffer_.reserve(kFlushBytes + kFlushBytes / 4);
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tempPath_.c_str());
}

void AtomicFile::append(std::string_view text) {
    buffer_.append(text);
    flushIfFull();
}

void AtomicFile::flush() {
    const char* p = buffer_.data();
    size_t n = buffer_.size();
    while (n > 0) {
        const ssize_t r = ::write(fd_, p, n);
        if (r < 0) {
            const int err = errno;
            if (err == EINTR) continue;
            fail("cannot write the temporary file " + tempPath_ + " (" + std::to_string(written_) +
                     " bytes written)",
                 err);
        }
        p += r;
        n -= static_cast<size_t>(r);
        written_ += static_cast<uint64_t>(r);
    }
    buffer_.clear();
}

void AtomicFile::commit() {
    flush();
    // fsync before the rename: otherwise a crash could leave the new name on blocks never written.
    if (::fsync(fd_) != 0) {
        const int err = errno;
        if (!syncUnsupported(err)) fail("cannot sync the temporary file " + tempPath_ + " to disk", err);
    }
    const int rc = ::close(fd_);
    const int closeErr = errno;
    fd_ = -1;
    if (rc != 0 && closeErr != EINTR) fail("cannot close the temporary file " + tempPath_, closeErr);
    if (::rename(tempPath_.c_str(), target_.c_str()) != 0) {
        const int err = errno;
        fail("cannot rename the temporary file " + tempPath_ + " over it", err);
    }
    committed_ = true;
    // The rename is an entry in the folder; a trace is not worth failing over a folder that
    // cannot be synced, so that one is best effort.
    std::string dir = std::filesystem::path(target_).parent_path().string();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

void AtomicFile::fail(const std::string& what, int err) const {
    std::string reason = std::strerror(err);
    if (err == ENOSPC || err == EDQUOT) reason += " (disk full)";
    throw TraceError(target_ + ": " + what_ + " not saved: " + what + ": " + reason);
}

}  // namespace trainbench::profiler
