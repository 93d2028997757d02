// libFuzzer target: any bytes as a CSV file, through CsvReader (header "auto") and decodeCsvLine
// on every line. DataError is how bad input must fail; any other exception, a crash or a
// sanitizer report is a bug. Seeds: tests/data/fuzz/csv/.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/data/sources/csv.h"
#include "engine/data/storage/storage.h"
#include "engine/util/errors.h"

using namespace trainbench::engine;

namespace {

// The input goes into one in-memory file, reopened by path for every run: no disk traffic.
int memoryFile() {
    static const int fd = [] {
        const int f = ::memfd_create("fuzz_csv", MFD_CLOEXEC);
        if (f < 0) std::abort();
        return f;
    }();
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const int fd = memoryFile();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
    CsvOptions options;
    // Odd-sized inputs also run with tiny read chunks, so lines cross chunk boundaries everywhere.
    if (size % 2 == 1) options.read_chunk_bytes = 1 + static_cast<int64_t>(size % 61);
    Storage storage;
    try {
        CsvReader reader(storage.open("/proc/self/fd/" + std::to_string(fd)), options);
        const CsvLayout& layout = reader.layout();
        if (layout.columns < 2 || layout.label_index < 0 || layout.label_index >= layout.columns) std::abort();
        if (layout.has_header && static_cast<int64_t>(layout.names.size()) != layout.columns) std::abort();
        Record record;
        Sample sample;
        while (reader.next(record)) {
            try {
                decodeCsvLine(record, layout, sample, reader.path());
                if (static_cast<int64_t>(sample.x.size()) != layout.features() || sample.label < 0) std::abort();
            } catch (const DataError&) {
                // a bad line: the next one is still read
            }
        }
    } catch (const DataError&) {
        // empty file, one column, ...
    }
    return 0;
}
