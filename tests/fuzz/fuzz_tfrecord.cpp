// TFRecordReader on arbitrary file contents: read as a plain file and as a zlib stream, strictly and
// with skip_corrupt. Every failure must be a DataError (anything else aborts the run). The input
// deflated and read as zlib must give exactly what the plain read gave: the same records, offsets,
// skip count and error message, since offsets and messages refer to the uncompressed stream.
#include <zlib.h>

#include <string>
#include <vector>

#include "engine/data/records/tfrecord.h"
#include "engine/data/storage/storage.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::FuzzFile;
using trainbench::fuzz::mismatch;

namespace {

struct Outcome {
    std::vector<std::string> records;
    std::vector<uint64_t> offsets;
    int64_t skipped = 0;
    std::string error;
    bool operator==(const Outcome&) const = default;
};

Outcome readAll(const std::string& path, Compression compression, bool skip) {
    Outcome o;
    Storage storage;
    try {
        TFRecordReader reader(storage.open(path), compression, skip);
        std::string record;
        uint64_t offset = 0;
        while (reader.next(record, &offset)) {
            o.records.push_back(record);
            o.offsets.push_back(offset);
        }
        o.skipped = reader.skipped();
    } catch (const DataError& e) {
        o.error = e.what();
    }
    if (skip && !o.error.empty()) mismatch("skip_corrupt threw: " + o.error);
    return o;
}

std::string describe(const Outcome& o) {
    return std::to_string(o.records.size()) + " records, " + std::to_string(o.skipped) + " skipped, error '" +
           o.error + "'";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static FuzzFile file;
    const std::string& path = file.write(data, size);
    const Outcome plain = readAll(path, Compression::kNone, false);
    const Outcome plainSkip = readAll(path, Compression::kNone, true);
    readAll(path, Compression::kZlib, false);
    readAll(path, Compression::kZlib, true);

    // Records a strict read delivered before failing come first in a skipping read too.
    for (size_t i = 0; i < plain.records.size(); ++i)
        if (i >= plainSkip.records.size() || plainSkip.records[i] != plain.records[i])
            mismatch("skip_corrupt lost record " + std::to_string(i));

    std::vector<uint8_t> deflated(compressBound(static_cast<uLong>(size)));
    uLongf n = static_cast<uLongf>(deflated.size());
    if (compress2(deflated.data(), &n, data, static_cast<uLong>(size), 1) != Z_OK) mismatch("compress2 failed");
    file.write(deflated.data(), n);
    const Outcome zlib = readAll(path, Compression::kZlib, false);
    const Outcome zlibSkip = readAll(path, Compression::kZlib, true);
    if (!(zlib == plain)) mismatch("plain: " + describe(plain) + "; zlib: " + describe(zlib));
    if (!(zlibSkip == plainSkip)) mismatch("skipping, plain: " + describe(plainSkip) + "; zlib: " + describe(zlibSkip));
    return 0;
}
