#pragma once
// The collective operations a synchronous strategy needs, over one group of ranks. `mirrored`
// implements them in shared memory between the replica threads of one process; `multi_worker` with
// Gloo over TCP between processes. Every rank of the group makes the same calls in the same order
// with the same sizes (as with MPI, NCCL or Gloo); calls block until the group has completed them.
#include <cstddef>

namespace trainbench::engine {

class Collective {
public:
    virtual ~Collective() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Element-wise sum of `count` floats over all ranks, in place: afterwards every rank holds the
    // same sum, bit for bit. count may be 0.
    virtual void allReduceSum(float* data, size_t count) = 0;
    // Copies `count` floats from rank `root` to every other rank.
    virtual void broadcast(float* data, size_t count, int root) = 0;
    // Returns once every rank has entered it.
    virtual void barrier() = 0;
    // Seconds this rank has spent, since it was created, waiting inside collectives for other ranks
    // to arrive (a straggler shows as the others' wait). 0 where the transport cannot tell.
    virtual double peerWaitSeconds() const { return 0.0; }
};

}  // namespace trainbench::engine
