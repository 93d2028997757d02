#pragma once
// The options of `trainbench-cli serve`, shared with `loadtest MODEL` (which starts a serve process
// with them): where it listens, TF Serving's batching parameters under their names, the model
// instances, the precision, an optional bearer token. Mapped onto engine::serving::ServingOptions
// one to one (docs/serving.md, docs/cli.md).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/serving/servingoptions.h"

namespace CLI {
class App;
}

namespace trainbench::cli {

struct ServingFlags {
    std::string bind = "127.0.0.1";
    int port = 8501;              // TF Serving's REST port; 0: any free port
    std::string modelName;        // empty: the run's name (or the model file's stem)
    bool enableBatching = true;
    int64_t maxBatchSize = 1000;
    int64_t batchTimeoutMicros = 0;
    int64_t numBatchThreads = 0;  // 0: the cores
    int64_t maxEnqueuedBatches = 10;
    std::vector<int64_t> allowedBatchSizes;
    int64_t instances = 0;        // 0: one per batch thread
    int threadsPerInstance = 1;
    int64_t requestThreads = 0;   // 0: the cores
    std::string precision = "fp32";  // fp32 | int8
    int64_t calibrationBatches = 4;  // int8: batches of 64 training examples
    std::string authTokenFile;       // a file holding the bearer token every request must carry
};

// Adds the flags to `cmd`. `withListen`: --bind and --port too (loadtest picks its server's port itself).
void addServingFlags(CLI::App* cmd, ServingFlags& flags, bool withListen);

// The server's options. std::invalid_argument naming the flag for a value the server refuses, and
// for an auth token file that cannot be read or is empty.
engine::serving::ServingOptions servingOptions(const ServingFlags& flags);

// The same flags as `serve` arguments ("--max-batch-size=32", ...), without --bind and --port:
// what loadtest passes to the server it starts.
std::vector<std::string> servingArguments(const ServingFlags& flags);

// NAME of /v1/models/NAME: letters, digits, '.', '_' and '-', 1 to 128 of them, not starting with
// '.'. "" if usable, else what is wrong.
std::string checkModelName(const std::string& name);

}  // namespace trainbench::cli
