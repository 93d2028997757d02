#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/checkpointformat.h"
#include "engine/data/records/crc32c.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using namespace checkpointformat;

namespace {

std::string systemError(int err) {
    std::string s = std::strerror(err);
    if (err == ENOSPC || err == EDQUOT) s += " (disk full)";
    return s;
}

// Some file systems cannot sync (or not a folder); that is no failure of the data written.
bool syncUnsupported(int err) { return err == EINVAL || err == EROFS || err == ENOTSUP; }

// The temporary file of one commit; removed unless the commit got as far as renaming it.
class TempFile {
public:
    explicit TempFile(const std::string& target) : target_(target) {
        // Unique within the process by the counter, across processes by the pid; O_EXCL settles the
        // rest (a file left by a crashed process with a reused pid).
        static std::atomic<unsigned> counter{0};
        for (;;) {
            path_ = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd_ >= 0) return;
            const int err = errno;
            if (err != EEXIST && err != EINTR)
                fail("cannot create the temporary file " + path_ + ": " + systemError(err));
        }
    }
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlink(path_.c_str());
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    void write(const void* data, size_t n, uint64_t total) {
        const auto* p = static_cast<const uint8_t*>(data);
        while (n > 0) {
            const ssize_t r = ::write(fd_, p, n);
            if (r < 0) {
                const int err = errno;
                if (err == EINTR) continue;
                fail("cannot write the temporary file " + path_ + " (" + std::to_string(written_) + " of " +
                     std::to_string(total) + " bytes written): " + systemError(err));
            }
            p += r;
            n -= static_cast<size_t>(r);
            written_ += static_cast<uint64_t>(r);
        }
    }

    // fsync before the rename: otherwise a crash could leave the new name on blocks never written.
    void syncAndClose() {
        if (::fsync(fd_) != 0) {
            const int err = errno;
            if (!syncUnsupported(err)) fail("cannot sync the temporary file " + path_ + " to disk: " + systemError(err));
        }
        const int rc = ::close(fd_);
        const int err = errno;
        fd_ = -1;
        if (rc != 0 && err != EINTR) fail("cannot close the temporary file " + path_ + ": " + systemError(err));
    }

    void renameOverTarget() {
        if (::rename(path_.c_str(), target_.c_str()) != 0) {
            const int err = errno;
            fail("cannot rename the temporary file " + path_ + " over it: " + systemError(err));
        }
        renamed_ = true;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw CheckpointError(target_ + ": checkpoint not saved: " + what);
    }

    std::string target_, path_;
    int fd_ = -1;
    uint64_t written_ = 0;
    bool renamed_ = false;
};

// The rename is an entry in the folder: until the folder is synced, a crash may forget it.
void syncFolder(const std::string& target) {
    std::string dir = std::filesystem::path(target).parent_path().string();
    if (dir.empty()) dir = ".";
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (::fsync(fd) != 0) err = errno;
        ::close(fd);
    }
    if (err != 0 && !syncUnsupported(err))
        throw CheckpointError(target + ": checkpoint written, but its folder " + dir +
                              " cannot be synced, so a crash may still lose it: " + systemError(err));
}

}  // namespace

void CheckpointWriter::add(std::string name, const void* data, size_t bytes) {
    if (name.empty() || name.size() > kMaxNameBytes)
        throw std::invalid_argument("checkpoint shard names are 1 to " + std::to_string(kMaxNameBytes) +
                                    " bytes, not " + std::to_string(name.size()));
    for (const Entry& e : shards_)
        if (e.shard.name == name) throw std::invalid_argument("checkpoint shard '" + name + "' added twice");
    if (bytes > 0 && data == nullptr) throw std::invalid_argument("checkpoint shard '" + name + "': no data");
    if (shards_.size() == UINT32_MAX) throw std::invalid_argument("a checkpoint holds at most 2^32 - 1 shards");
    const auto* p = static_cast<const uint8_t*>(data);
    Entry e{{std::move(name), std::vector<uint8_t>(p, p + bytes)}, crc32c(data, bytes)};
    shards_.push_back(std::move(e));
}

void CheckpointWriter::addFloats(std::string name, std::span<const float> values) {
    add(std::move(name), values.data(), values.size_bytes());
}

uint64_t CheckpointWriter::fileBytes() const {
    uint64_t n = kHeaderBytes + kCrcBytes + metadata_.size();
    for (const Entry& e : shards_) n += kEntryFixedBytes + e.shard.name.size() + e.shard.bytes.size();
    return n;
}

void CheckpointWriter::commit(const std::string& path) const {
    // Header, table, table CRC and metadata are built in one buffer; shard data goes out from the
    // shards themselves, one write each, without another copy.
    size_t tableBytes = 0;
    for (const Entry& e : shards_) tableBytes += kEntryFixedBytes + e.shard.name.size();
    std::vector<uint8_t> front(kHeaderBytes + tableBytes + kCrcBytes + metadata_.size());
    uint8_t* h = front.data();
    std::memcpy(h, kMagic, sizeof kMagic);
    store32(h + kVersionOffset, kVersion);
    store32(h + kCountOffset, static_cast<uint32_t>(shards_.size()));
    store64(h + kTableBytesOffset, tableBytes);
    store64(h + kMetadataBytesOffset, metadata_.size());
    store32(h + kMetadataCrcOffset, crc32c(metadata_.data(), metadata_.size()));
    store32(h + kHeaderCrcOffset, crc32c(h, kHeaderCrcOffset));
    uint8_t* t = h + kHeaderBytes;
    for (const Entry& e : shards_) {
        store32(t, static_cast<uint32_t>(e.shard.name.size()));
        std::memcpy(t + 4, e.shard.name.data(), e.shard.name.size());
        t += 4 + e.shard.name.size();
        store64(t, e.shard.bytes.size());
        store32(t + 8, e.crc);
        t += 12;
    }
    store32(t, crc32c(h + kHeaderBytes, tableBytes));
    std::memcpy(t + kCrcBytes, metadata_.data(), metadata_.size());

    const uint64_t total = fileBytes();
    TempFile tmp(path);
    tmp.write(front.data(), front.size(), total);
    for (const Entry& e : shards_) tmp.write(e.shard.bytes.data(), e.shard.bytes.size(), total);
    tmp.syncAndClose();
    tmp.renameOverTarget();
    syncFolder(path);
}

}  // namespace trainbench::engine
