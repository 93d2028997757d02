// Checkpoint::read on arbitrary bytes: it either reads a checkpoint or throws CheckpointError with a
// message that starts with the path; it never crashes, hangs or allocates what the file does not
// hold. The format is canonical: a checkpoint that reads, written again from what was read, gives
// back the same bytes.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/util/errors.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::FuzzFile;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static FuzzFile file;
    static const std::string rewritten = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                                         "/trainbench-fuzz-checkpoint-" + std::to_string(::getpid()) + ".ckpt";
    const std::string& path = file.write(data, size);
    try {
        const Checkpoint c = Checkpoint::read(path);
        CheckpointWriter w;
        for (const CheckpointShard& s : c.shards()) w.add(s.name, s.bytes.data(), s.bytes.size());
        w.setMetadata(c.metadata());
        if (w.fileBytes() != size) mismatch("a checkpoint that reads is " + std::to_string(size) +
                                            " bytes, written again " + std::to_string(w.fileBytes()));
        w.commit(rewritten);
        std::ifstream in(rewritten, std::ios::binary);
        const std::vector<char> again((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (again.size() != size || std::memcmp(again.data(), data, size) != 0)
            mismatch("a checkpoint written again from what was read differs from the input");
    } catch (const CheckpointError& e) {
        if (std::string(e.what()).rfind(path + ": ", 0) != 0) mismatch(std::string("message without the path: ") + e.what());
    }
    return 0;
}
