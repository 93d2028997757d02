#pragma once
// A file that holds the current fuzz input, for parsers that open a path: an in-memory file
// (memfd), reachable as /proc/self/fd/N, rewritten for every input without touching the disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainbench::fuzz {

class FuzzFile {
public:
    FuzzFile() : fd_(::memfd_create("trainbench-fuzz", MFD_CLOEXEC)) {
        if (fd_ < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    FuzzFile(const FuzzFile&) = delete;
    FuzzFile& operator=(const FuzzFile&) = delete;

    // Replaces the file's contents.
    const std::string& write(const void* data, size_t size) {
        if (::ftruncate(fd_, 0) != 0) std::abort();
        const auto* p = static_cast<const uint8_t*>(data);
        for (size_t done = 0; done < size;) {
            const ssize_t n = ::pwrite(fd_, p + done, size - done, static_cast<off_t>(done));
            if (n <= 0) std::abort();
            done += static_cast<size_t>(n);
        }
        return path_;
    }

private:
    int fd_;
    std::string path_;
};

// Stops the run with a message libFuzzer shows next to the reproducer.
[[noreturn]] inline void mismatch(const std::string& what) {
    std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    std::abort();
}

}  // namespace trainbench::fuzz
