#pragma once
// One replica's side of synchronous data parallelism: its gradients are summed with every other
// replica's through a Collective, bucket by bucket, as the backward pass finishes them (last layers
// first), so the reduction of late layers overlaps the backward pass of early ones, as in PyTorch DDP
// and Horovod's tensor fusion. Each bucket is then handed to the optimizer.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "engine/collective/collective.h"

namespace trainbench::engine {

class GradientSync {
public:
    struct Bucket {
        int64_t offset = 0;  // into the flat gradient buffer
        int64_t count = 0;   // floats
        int layers = 0;      // layers whose gradients make it up
    };
    // A span of the flat gradient buffer that backward finishes at once (a layer's parameters).
    using Span = std::pair<int64_t, int64_t>;  // offset, count

    // `spans` in the order backward finishes them (last layer first); consecutive spans must be
    // adjacent in the buffer. Spans are grouped into buckets of at least `bucketBytes` (0: a bucket
    // per span). With `overlap`, a communication thread reduces each bucket as soon as it is
    // complete; without, finish() reduces them all after backward.
    GradientSync(Collective& collective, float* grads, const std::vector<Span>& spans, size_t bucketBytes, bool overlap);
    ~GradientSync();
    GradientSync(const GradientSync&) = delete;
    GradientSync& operator=(const GradientSync&) = delete;

    const std::vector<Bucket>& buckets() const { return buckets_; }

    // Starts a step: no bucket is ready.
    void beginStep();
    // Backward has finished the span at `offset` (called on the replica's thread, in span order).
    void spanReady(int64_t offset, int64_t count);
    // All spans are final at once (a replica with no examples this step: its gradients are zero).
    void allReady();
    // Waits for each bucket's reduction in turn and calls apply(offset, count) on it as it arrives.
    // Returns the seconds the caller was blocked (communication not hidden behind backward, and peers).
    // Rethrows what the collective threw (a peer lost, a timeout).
    double finish(const std::function<void(int64_t offset, int64_t count)>& apply);
    // Seconds the last step spent inside the collective moving and summing data (overlapped with
    // backward or not), and waiting in it for other replicas to arrive; the two do not overlap.
    double commSeconds() const { return commSeconds_ - peerWaitSeconds(); }
    double peerWaitSeconds() const { return collective_.peerWaitSeconds() - peerWaitAtStart_; }

    // How spans are grouped; exposed for tests.
    static std::vector<Bucket> plan(const std::vector<Span>& spans, size_t bucketBytes);

private:
    void commLoop();
    void markReady(size_t bucket);

    Collective& collective_;
    float* grads_;
    std::vector<Bucket> buckets_;
    std::vector<int> pendingLayers_;  // per bucket, spans still to come this step
    size_t nextSpanBucket_ = 0;       // bucket the next spanReady() belongs to
    bool overlap_;

    std::mutex mutex_;
    std::condition_variable cv_;
    size_t ready_ = 0;     // buckets complete and waiting for (or under) reduction
    size_t reduced_ = 0;   // buckets reduced
    bool stop_ = false;
    std::exception_ptr error_;
    double commSeconds_ = 0.0;      // inside the collective, peer waits included
    double peerWaitAtStart_ = 0.0;  // the collective's count at beginStep()
    std::thread thread_;
};

}  // namespace trainbench::engine
