#pragma once
// Collectives between the replica threads of one process (the `mirrored` strategy): every rank's
// buffer is in the same address space, so an all-reduce is a reduce-scatter and an all-gather done
// by the ranks themselves, each on its own slice, with no copies through a transport.
#include <barrier>
#include <cstddef>
#include <memory>
#include <vector>

#include "engine/collective/collective.h"

namespace trainbench::engine {

// What the ranks of one group share. Create one per group and a SharedMemoryCollective per rank.
class SharedMemoryGroup {
public:
    explicit SharedMemoryGroup(int size);
    int size() const { return size_; }

private:
    friend class SharedMemoryCollective;
    int size_;
    std::barrier<> barrier_;
    std::vector<float*> buffers_;   // each rank's buffer for the operation under way
    std::vector<size_t> counts_;    // and its length, checked to agree
};

class SharedMemoryCollective final : public Collective {
public:
    SharedMemoryCollective(std::shared_ptr<SharedMemoryGroup> group, int rank);
    int rank() const override { return rank_; }
    int size() const override { return group_->size(); }
    // Rank k sums slice k of every rank's buffer, in rank order 0..N-1 whoever runs it (so the
    // result is the same bit for bit on every rank and from run to run), then every rank copies the
    // other slices. Slices are cut on 64-byte boundaries, so ranks never write one cache line.
    // Throws std::logic_error on every rank if the ranks passed different counts.
    void allReduceSum(float* data, size_t count) override;
    void broadcast(float* data, size_t count, int root) override;
    void barrier() override;
    double peerWaitSeconds() const override { return peerWait_; }

private:
    // Publishes this rank's buffer and waits until every rank has; checks the counts agree.
    void publish(float* data, size_t count);
    std::shared_ptr<SharedMemoryGroup> group_;
    int rank_;
    double peerWait_ = 0.0;  // in publish(): until every rank has arrived
};

}  // namespace trainbench::engine
