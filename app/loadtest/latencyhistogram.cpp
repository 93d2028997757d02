#include "app/loadtest/latencyhistogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace trainbench::app::loadtest {

namespace {
constexpr int kSubBits = 10;                  // 1024 buckets per power of two above the linear range
constexpr int64_t kHalf = int64_t{1} << kSubBits;
constexpr int64_t kLinear = kHalf * 2;        // 0..2047: one bucket per nanosecond
constexpr int kTopBit = 42;                   // kHighest's highest set bit
constexpr int kBuckets = (kTopBit - kSubBits + 1) * static_cast<int>(kHalf) + static_cast<int>(kHalf);
}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

int LatencyHistogram::bucketOf(int64_t v) {
    if (v < kLinear) return static_cast<int>(v);
    const int shift = std::bit_width(static_cast<uint64_t>(v)) - 1 - kSubBits;  // v >> shift in [1024, 2047]
    return static_cast<int>((shift + 1) * kHalf + (v >> shift) - kHalf);
}

int64_t LatencyHistogram::middleOf(int bucket) {
    if (bucket < kLinear) return bucket;
    const int shift = bucket / static_cast<int>(kHalf) - 1;
    const int64_t lower = (bucket % kHalf + kHalf) << shift;
    return lower + ((int64_t{1} << shift) - 1) / 2;
}

void LatencyHistogram::record(int64_t nanoseconds) {
    const int64_t v = std::clamp<int64_t>(nanoseconds, 0, kHighest);
    ++counts_[static_cast<size_t>(bucketOf(v))];
    const int64_t exact = std::max<int64_t>(nanoseconds, 0);
    min_ = count_ ? std::min(min_, exact) : exact;
    max_ = count_ ? std::max(max_, exact) : exact;
    sum_ += static_cast<double>(exact);
    ++count_;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    if (!other.count_) return;
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    min_ = count_ ? std::min(min_, other.min_) : other.min_;
    max_ = count_ ? std::max(max_, other.max_) : other.max_;
    sum_ += other.sum_;
    count_ += other.count_;
}

int64_t LatencyHistogram::percentile(double p) const {
    if (!count_) return 0;
    const double wanted = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(count_));
    const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(wanted));
    int64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        seen += counts_[i];
        if (seen >= rank) return std::clamp(middleOf(static_cast<int>(i)), min_, max_);
    }
    return max_;
}

}  // namespace trainbench::app::loadtest
