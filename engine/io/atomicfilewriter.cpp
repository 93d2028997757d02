#include "engine/io/atomicfilewriter.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "engine/io/tempfiles.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

std::string systemError(int err) {
    std::string s = std::strerror(err);
    if (err == ENOSPC || err == EDQUOT) s += " (disk full)";
    return s;
}

// Some file systems and devices cannot sync (or not a folder); that is no failure of the data.
bool syncUnsupported(int err) { return err == EINVAL || err == EROFS || err == ENOTSUP; }

// O_TMPFILE is refused by the file system (or the kernel predates it): use a named temporary file.
bool noTmpFile(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

// A pipe or a device takes the bytes as they come: there is no file to replace. Nor is there one
// in /dev or /proc: /dev/stdout may lead to a regular file, which the shell holds open, and a
// rename would put a file in place of the link (and, for root, of /dev/stdout for everyone).
bool writtenInPlace(const std::string& target, const std::string& folder) {
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return true;
    std::error_code ec;
    const std::string real = std::filesystem::canonical(folder, ec).string();
    for (const char* pseudo : {"/dev", "/proc"})
        if (!ec && (real == pseudo || real.rfind(std::string(pseudo) + "/", 0) == 0)) return true;
    return false;
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string target, AtomicFileOptions options)
    : target_(std::move(target)), options_(std::move(options)) {
    if (target_.empty()) fail("no file name given", 0);
    const std::filesystem::path p(target_);
    name_ = p.filename().string();
    dir_ = p.parent_path().string();
    if (name_.empty() || name_ == "." || name_ == "..") fail("the name is a folder's, not a file's", EISDIR);
    const std::string folder = dir_.empty() ? "." : dir_;
    if (writtenInPlace(target_, folder)) {
        inPlace_ = true;
        do fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        while (fd_ < 0 && errno == EINTR);
        if (fd_ < 0) fail("cannot open it for writing", errno);
        return;
    }
    dirFd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd_ < 0) fail("cannot open the folder " + folder, errno);
    try {
        sweepStaleTempFiles(dirFd_, folder);
        openTemp();
    } catch (...) {
        ::close(dirFd_);  // no destructor runs for a constructor that throws
        throw;
    }
}

AtomicFileWriter::~AtomicFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !tempName_.empty()) ::unlinkat(dirFd_, tempName_.c_str(), 0);
    if (dirFd_ >= 0) ::close(dirFd_);
}

void AtomicFileWriter::openTemp() {
    const int flags = O_WRONLY | O_CLOEXEC;
    do fd_ = ::openat(dirFd_, ".", O_TMPFILE | flags, options_.mode);
    while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
        const int err = errno;
        if (!noTmpFile(err)) fail("cannot create a temporary file in " + (dir_.empty() ? "." : dir_), err);
        for (;;) {
            tempName_ = tempFileName(name_);
            fd_ = ::openat(dirFd_, tempName_.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW, options_.mode);
            if (fd_ >= 0) break;
            const int e = errno;
            if (e == EEXIST || e == EINTR) continue;
            const std::string path = (std::filesystem::path(dir_) / tempName_).string();
            tempName_.clear();
            fail("cannot create the temporary file " + path, e);
        }
    }
    // Tells the stale-file sweep of other processes that this file is in use (tempfiles.h).
    (void)::flock(fd_, LOCK_EX | LOCK_NB);
}

void AtomicFileWriter::write(const void* data, size_t n) {
    if (!error_.empty()) throw FileWriteError(error_);
    if (committed_) throw std::logic_error(target_ + ": write after commit");
    const char* p = static_cast<const char*>(data);
    if (n >= kBufferBytes / 2) {
        flush();         // what is buffered comes first, however much room the buffer has left
        writeOut(p, n);  // a big piece goes on without a copy
        return;
    }
    if (buffer_.size() + n > kBufferBytes) flush();
    buffer_.append(p, n);
}

void AtomicFileWriter::flush() {
    writeOut(buffer_.data(), buffer_.size());
    buffer_.clear();
}

void AtomicFileWriter::writeOut(const char* p, size_t n) {
    while (n > 0) {
        const ssize_t r = ::write(fd_, p, n);
        if (r < 0) {
            const int err = errno;
            if (err == EINTR) continue;
            std::string done = std::to_string(written_);
            if (options_.expected_bytes > 0) done += " of " + std::to_string(options_.expected_bytes);
            fail("cannot write (" + done + " bytes written)", err);
        }
        p += r;
        n -= static_cast<size_t>(r);
        written_ += static_cast<uint64_t>(r);
    }
}

void AtomicFileWriter::commit() {
    if (!error_.empty()) throw FileWriteError(error_);
    if (committed_) throw std::logic_error(target_ + ": committed twice");
    flush();
    // fsync before the rename: otherwise a crash could leave the new name on blocks never written.
    if ((options_.durable || inPlace_) && ::fsync(fd_) != 0 && !syncUnsupported(errno))
        fail("cannot sync it to disk", errno);
    if (!inPlace_ && tempName_.empty()) linkIntoFolder();
    // Closed before the rename: file systems such as NFS report write errors only here.
    const int rc = ::close(fd_);
    const int closeErr = errno;
    fd_ = -1;
    if (rc != 0 && closeErr != EINTR) fail("cannot close it", closeErr);
    if (inPlace_) {
        committed_ = true;
        return;
    }
    if (::renameat(dirFd_, tempName_.c_str(), dirFd_, name_.c_str()) != 0)
        fail("cannot rename the temporary file " + (std::filesystem::path(dir_) / tempName_).string() + " over it", errno);
    committed_ = true;
    syncFolder();
}

// linkat() cannot replace a file, so the unnamed file gets a temporary name first. Linking by the
// descriptor (AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; /proc/self/fd works for everyone else.
void AtomicFileWriter::linkIntoFolder() {
    const std::string viaProc = "/proc/self/fd/" + std::to_string(fd_);
    for (;;) {
        tempName_ = tempFileName(name_);
        int rc = ::linkat(fd_, "", dirFd_, tempName_.c_str(), AT_EMPTY_PATH);
        if (rc != 0 && (errno == ENOENT || errno == EPERM || errno == EINVAL))
            rc = ::linkat(AT_FDCWD, viaProc.c_str(), dirFd_, tempName_.c_str(), AT_SYMLINK_FOLLOW);
        if (rc == 0) return;
        const int err = errno;
        tempName_.clear();
        if (err == EEXIST || err == EINTR) continue;
        fail("cannot link the temporary file into " + (dir_.empty() ? std::string(".") : dir_), err);
    }
}

// The rename is an entry in the folder: until the folder is synced, a crash may forget it.
void AtomicFileWriter::syncFolder() {
    if (!options_.durable || ::fsync(dirFd_) == 0 || syncUnsupported(errno)) return;
    const int err = errno;
    error_ = target_ + ": " + options_.what + " written, but its folder " + (dir_.empty() ? "." : dir_) +
             " cannot be synced, so a crash may still lose it: " + systemError(err);
    throw FileWriteError(error_);
}

void AtomicFileWriter::fail(const std::string& step, int err) {
    error_ = target_ + ": " + options_.what + " not saved: " + step;
    if (err != 0) error_ += ": " + systemError(err);
    throw FileWriteError(error_);
}

void writeFileAtomically(const std::string& path, std::string_view bytes, AtomicFileOptions options) {
    AtomicFileWriter file(path, std::move(options));
    file.write(bytes);
    file.commit();
}

void syncFileSystemOf(const std::string& folder) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (::syncfs(fd) != 0) err = errno;
        ::close(fd);
    }
    if (err != 0) throw FileWriteError(folder + ": cannot sync the files written there to disk: " + systemError(err));
}

}  // namespace trainbench::engine
