#pragma once
// trainbench-bench `allreduce`: raw Gloo (gloo::allreduce, ring, on a context of its own) against
// GlooCollective::allReduceSum, same sizes, same processes, alternating op by op; bus bandwidth side
// by side. `seconds`: about how long each size runs.
#include <string>

namespace trainbench::bench {

// Starts the job's store and `ranks` worker processes (this executable, `allreduce-worker`), and
// waits for them; rank 0 prints the table.
int allreduceBench(int ranks, double seconds);
// One rank of it. The job token comes in the environment (TRAINBENCH_JOB_TOKEN), not on the
// command line where every local user could read it.
int allreduceWorker(int rank, int size, const std::string& store, double seconds);

}  // namespace trainbench::bench
