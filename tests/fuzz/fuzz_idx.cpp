// readIdx on arbitrary bytes, plain or gzip: from a file and from memory, with the same outcome
// (the same array, or the same message). Every failure must be a DataError.
#include <string>
#include <vector>

#include "engine/data/idxreader.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::FuzzFile;
using trainbench::fuzz::mismatch;

namespace {

struct Outcome {
    IdxArray array;
    std::string error;
};

template <class Fn>
Outcome attempt(Fn fn) {
    Outcome o;
    try {
        o.array = fn();
    } catch (const DataError& e) {
        o.error = e.what();
    }
    return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static FuzzFile file;
    const std::string& path = file.write(data, size);
    const std::vector<uint8_t> bytes(data, data + size);
    const Outcome fromFile = attempt([&] { return readIdx(path); });
    const Outcome fromMemory = attempt([&] { return readIdx(bytes, path); });
    if (fromFile.error != fromMemory.error)
        mismatch("file: '" + fromFile.error + "', memory: '" + fromMemory.error + "'");
    if (fromFile.error.empty()) {
        const IdxArray& a = fromFile.array;
        if (a.dims != fromMemory.array.dims || a.type != fromMemory.array.type || a.data != fromMemory.array.data)
            mismatch("file and memory reads differ");
        uint64_t n = idxElementSize(a.type);
        for (int64_t d : a.dims) n *= static_cast<uint64_t>(d);
        if (a.data.size() != n) mismatch("data size disagrees with the header");
    } else if (fromFile.error.rfind(path + ": ", 0) != 0) {
        mismatch("message does not start with the path: " + fromFile.error);
    }
    return 0;
}
