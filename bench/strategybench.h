#pragma once
// `trainbench-bench mirrored`: the mirrored strategy's scaling on this machine (bench/strategybench.cpp).
#include <string>

namespace trainbench::bench {

// One device with 1 thread, one device with `replicas` threads, and `replicas` mirrored replicas of
// 1 thread each, on the same model and global batch, alternating rounds of `steps` steps; prints
// median samples/s of each, the speed-up over 1 thread and the scaling efficiency.
int mirroredScaling(const std::string& preset, int replicas, int rounds, int steps, int64_t batch);

}  // namespace trainbench::bench
