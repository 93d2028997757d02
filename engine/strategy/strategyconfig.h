#pragma once
// How training is spread over replicas: the experiment's "strategy" section.
#include <string>

#include "engine/strategy/strategykind.h"

namespace trainbench::engine {

struct StrategyConfig {
    StrategyKind type = StrategyKind::Single;  // the file's "single", "mirrored", ...: parsed once, at loading
    std::string slice;             // tpu_pod: the TPU slice, e.g. "v3-32" (its replicas: the slice's cores)
    int replicas = 1;              // mirrored: replicas in this process; multi_worker, parameter_server: worker processes
    int parameter_servers = 1;     // parameter_server: processes holding the variables
    int threads_per_replica = 0;   // compute threads of each replica (0: train.threads split evenly)
    std::string batch_scope = "global";  // train.batch_size is the global batch, or "per_replica"
    double bucket_mb = 1.0;        // gradients are reduced in buckets of at least this (0: one per layer)
    bool overlap = true;           // reduce buckets while backward goes on (false: after it)
    double timeout_s = 30.0;       // multi-process: a peer silent this long is lost (a dead socket fails sooner)
    int max_restarts = 3;          // multi-process: restarts from the last checkpoint before the job fails
};

}  // namespace trainbench::engine
