#pragma once
// trainbench-bench `allreduce-mpi`: raw MPI_Allreduce against MpiCollective::allReduceSum and
// GlooCollective::allReduceSum, same sizes, same processes (started by mpirun), op by op.
// `seconds`: about how long each size runs.
namespace trainbench::bench {

// Runs `mpirun -np ranks` of this executable's `allreduce-mpi-worker` and waits; rank 0 prints.
int mpiAllreduceBench(int ranks, double seconds);
// One rank of it (under mpirun).
int mpiAllreduceWorker(double seconds);

}  // namespace trainbench::bench
