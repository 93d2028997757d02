#pragma once
// The one way trainbench writes an output file (checkpoints, TFRecord shards, converted examples,
// traces, reports, CSV exports, launch scripts, experiment files): whole or not at all. Readers of
// the target see the old file or the complete new one, never a part; a failed or abandoned write
// leaves the target as it was, and a process killed at any moment (SIGKILL included) leaves no
// temporary file behind.
//
// How (Linux): the data goes into an unnamed file made with O_TMPFILE in the target's folder, which
// vanishes with its last descriptor; commit() fsyncs it, links it into the folder under a temporary
// name, rename()s that over the target (linkat cannot replace a file) and fsyncs the folder. Where
// the file system refuses O_TMPFILE the temporary file is named from the start. Either way a named
// temporary file ("." + name + ".trainbench-tmp-<pid>-<n>") can only outlive a crash between its creation and
// the rename; such leftovers of dead processes are removed the first time a process writes into
// the folder (engine/io/tempfiles.h).
//
// A target that exists and is not a regular file or folder (a pipe, a device), and any target in
// /dev or /proc (/dev/stdout, /dev/null, /proc/self/fd/1), is written in place, truncated as a shell
// redirection would: there is nothing to replace. Anywhere else a symbolic link at the target is
// replaced by the file, not followed.
//
// Errors are FileWriteErrors (engine/util/errors.h) naming the target and the failing step, with the
// system's reason ("disk full" added for ENOSPC and EDQUOT):
//   "<target>: <what> not saved: cannot write (65536 of 1048650 bytes written): No space left on device (disk full)"
#include <cstdint>
#include <string>
#include <string_view>

namespace trainbench::engine {

struct AtomicFileOptions {
    std::string what = "file";  // what the file is, for messages: "checkpoint", "trace", "CSV export"
    // Permissions of the new file before the umask. 0600 for files that hold a secret: the mode is
    // the new file's whatever the old one had.
    unsigned mode = 0644;
    // fsync the file before the rename and the folder after it, so that a power loss keeps the new
    // file too. Off for bulk outputs of many small files (one per converted example), which the
    // caller syncs once at the end (syncFileSystemOf): a kill still never leaves a part file.
    bool durable = true;
    uint64_t expected_bytes = 0;  // when known, messages say "<written> of <expected> bytes written"
};

class AtomicFileWriter {
public:
    explicit AtomicFileWriter(std::string target, AtomicFileOptions options = {});
    ~AtomicFileWriter();  // without commit(): the target is untouched and nothing is left behind
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

    // Buffered (1 MiB); larger pieces go out without a copy. After a failure every later write() or
    // commit() throws the same error again.
    void write(const void* data, size_t n);
    void write(std::string_view text) { write(text.data(), text.size()); }
    // The buffer, for callers that build text in place; call flushIfFull() now and then.
    std::string& buffer() { return buffer_; }
    void flushIfFull() {
        if (buffer_.size() >= kBufferBytes) flush();
    }
    // Puts the file in place. Once only.
    void commit();

    uint64_t bytesWritten() const { return written_ + buffer_.size(); }
    const std::string& target() const { return target_; }

private:
    static constexpr size_t kBufferBytes = size_t{1} << 20;
    void openTemp();
    void flush();
    void writeOut(const char* p, size_t n);
    void linkIntoFolder();
    void syncFolder();
    [[noreturn]] void fail(const std::string& step, int err);

    std::string target_, dir_, name_;
    AtomicFileOptions options_;
    std::string buffer_;
    std::string tempName_;  // the temporary file's name in dir_, once it has one
    std::string error_;     // the first failure; repeated by later calls
    int fd_ = -1, dirFd_ = -1;
    uint64_t written_ = 0;
    bool inPlace_ = false, committed_ = false;
};

// Writes `bytes` to `path` whole or not at all (one AtomicFileWriter).
void writeFileAtomically(const std::string& path, std::string_view bytes, AtomicFileOptions options = {});

// Flushes the file system holding `folder` to disk (syncfs): the one durability step for a bulk
// output written with durable = false. FileWriteError naming the folder on failure.
void syncFileSystemOf(const std::string& folder);

}  // namespace trainbench::engine
