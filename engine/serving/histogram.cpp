#include "engine/serving/histogram.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace trainbench::engine::serving {

namespace {
// Shortest text that reads back as the same double (Prometheus parses Go's float syntax).
std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}
}  // namespace

Histogram::Histogram(std::vector<double> upperBounds)
    : bounds_(std::move(upperBounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
    for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

std::vector<double> Histogram::powersOfTwo(double last) {
    std::vector<double> b;
    for (double v = 1; v < last; v *= 2) b.push_back(v);
    b.push_back(last);
    return b;
}

std::vector<double> Histogram::latencySeconds() {
    std::vector<double> b = {50e-6};
    for (double decade = 1e-4; decade < 10; decade *= 10)
        for (double m : {1.0, 2.5, 5.0}) b.push_back(m * decade);
    b.push_back(10);
    return b;
}

void Histogram::observe(double value) {
    const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
}

std::string Histogram::exposition(const std::string& name, const std::string& help) const {
    std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        cumulative += buckets_[i].load();
        const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
        out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += name + "_sum " + number(sum_.load()) + "\n";
    out += name + "_count " + std::to_string(cumulative) + "\n";
    return out;
}

}  // namespace trainbench::engine::serving
