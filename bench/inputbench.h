#pragma once
#include <cstdint>
#include <string>

namespace trainbench::bench {

struct InputReadKnobs {
    int64_t batch = 128;
    int64_t cycle = 0, map = 0;  // 0: the thread count
    int64_t prefetch = -1;       // -1: 2
};
// Fashion-MNIST TFRecord shards vs gzip IDX, read and parsed to float batches (page cache).
int inputRead(const std::string& dataDir, int threads, int rounds, const std::string& side, const InputReadKnobs& knobs);
// One file per example vs 16 shards on the emulated cloud store; `limit` files of the one-file
// layout (0 = all 60000) to keep the slow side short; rates are compared.
int smallFiles(const std::string& dataDir, int streams, int64_t limit);

}  // namespace trainbench::bench
