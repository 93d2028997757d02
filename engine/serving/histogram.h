#pragma once
// A Prometheus histogram: cumulative buckets with upper bounds, a sum and a count, updated
// without locks from any thread and written in the text exposition format.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainbench::engine::serving {

class Histogram {
public:
    explicit Histogram(std::vector<double> upperBounds);
    // 1, 2, 4, ... up to and including `last`.
    static std::vector<double> powersOfTwo(double last);
    // Seconds from 50 µs to 10 s, 1-2.5-5 per decade.
    static std::vector<double> latencySeconds();

    void observe(double value);
    uint64_t count() const { return count_.load(); }
    double sum() const { return sum_.load(); }
    // Observations ≤ upperBounds()[i] (not cumulative).
    uint64_t bucketCount(size_t i) const { return buckets_[i].load(); }
    const std::vector<double>& upperBounds() const { return bounds_; }

    // "# HELP", "# TYPE" and the _bucket, _sum and _count lines of `name`.
    std::string exposition(const std::string& name, const std::string& help) const;

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // one more than bounds_: +Inf
    std::atomic<uint64_t> count_{0};
    std::atomic<double> sum_{0};
};

}  // namespace trainbench::engine::serving
