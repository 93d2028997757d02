#pragma once
// A file written whole or not at all: text goes into a temporary file in the target's folder
// ("<name>.tmp.<pid>.<n>") through a buffer, and commit() fsyncs it and renames it over the target.
// Until then (and if anything fails, or the writer is destroyed first) the target keeps what it
// held and the temporary file is removed. Errors are TraceErrors naming the target and what it is
// ("out.json: trace not saved: ...", "r.html: report not saved: ...").
// (The checkpoint writer does the same for its binary files; see engine/checkpoint.)
#include <cstdint>
#include <string>
#include <string_view>

namespace trainbench::profiler {

class AtomicFile {
public:
    explicit AtomicFile(std::string target, std::string what = "trace");
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Buffered; written out whenever the buffer passes about a megabyte.
    void append(std::string_view text);
    // The buffer callers may append to directly (then call flushIfFull()).
    std::string& buffer() { return buffer_; }
    void flushIfFull() {
        if (buffer_.size() >= kFlushBytes) flush();
    }
    void commit();

    uint64_t bytesWritten() const { return written_ + buffer_.size(); }

private:
    static constexpr size_t kFlushBytes = size_t{1} << 20;
    void flush();
    [[noreturn]] void fail(const std::string& what, int err) const;

    std::string target_, what_, tempPath_;
    std::string buffer_;
    int fd_ = -1;
    uint64_t written_ = 0;
    bool committed_ = false;
};

}  // namespace trainbench::profiler
