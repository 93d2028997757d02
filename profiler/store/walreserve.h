#pragma once
// Room kept on disk for a run's last write. RunWriter commits its batches into the store's
// write-ahead log (the "-wal" file next to it). When the disk fills up in the middle of a batch,
// the UPDATE that marks the run failed needs a few pages of WAL too; had the batch failed at its
// first page there would be no room for them, the run would stay 'running', be found 'interrupted'
// later, and the cause would be lost. So after every commit the blocks just past the WAL's end are
// allocated ahead (fallocate, FALLOC_FL_KEEP_SIZE: the file's size and content stay as they are;
// SQLite sees nothing). A batch that meets a full disk has then written at least that much before it
// fails, and the UPDATE goes where its pages were; and when the room cannot be kept any more, the
// writer stops while the final status still fits.
#include <cstdint>
#include <string>

namespace trainbench::profiler {

class WalReserve {
public:
    static constexpr uint64_t kWantedBytes = 256 * 1024;  // kept ahead while the disk has room
    static constexpr uint64_t kNeededBytes = 64 * 1024;   // the final UPDATE: row, overflow and index pages

    explicit WalReserve(const std::string& storePath) : walPath_(storePath + "-wal") {}

    // After a commit. True when the room is kept (or this file system cannot allocate ahead, or
    // there is no WAL yet: nothing to do). False when the disk is too full for it: write the final
    // status now (its room is kept if kNeededBytes could be) and nothing more; error() is the errno.
    bool keep();
    int error() const { return error_; }
    const std::string& walPath() const { return walPath_; }

private:
    std::string walPath_;
    int error_ = 0;
};

}  // namespace trainbench::profiler
