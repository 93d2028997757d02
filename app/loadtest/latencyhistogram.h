#pragma once
// Latencies in nanoseconds counted in log-linear buckets, as HdrHistogram does: below 2048 ns one
// bucket per nanosecond, above it 1024 buckets per power of two. A bucket is then at most 1/1024 of
// its lower edge wide, and the value a percentile reports (the bucket's middle) is within 1/2048
// (0.05 %) of every value counted in it: three significant digits at any magnitude, in a fixed
// 34,816 counters, with no sorting. Each client thread counts into its own and merge() adds them.
#include <cstdint>
#include <vector>

namespace trainbench::app::loadtest {

class LatencyHistogram {
public:
    // Values above this (about 2.4 hours) are counted at it; max() still reports the true maximum.
    static constexpr int64_t kHighest = (int64_t{1} << 43) - 1;

    LatencyHistogram();

    void record(int64_t nanoseconds);  // negative values count as 0
    void merge(const LatencyHistogram& other);

    int64_t count() const { return count_; }
    int64_t min() const { return count_ ? min_ : 0; }
    int64_t max() const { return count_ ? max_ : 0; }
    double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
    // The nearest-rank percentile (the smallest value with at least p % of the values at or below
    // it), as the middle of its bucket clamped to [min, max]; 0 when empty. p in [0, 100].
    int64_t percentile(double p) const;

private:
    static int bucketOf(int64_t v);
    static int64_t middleOf(int bucket);

    std::vector<int64_t> counts_;
    int64_t count_ = 0;
    int64_t min_ = 0, max_ = 0;
    double sum_ = 0.0;
};

}  // namespace trainbench::app::loadtest
