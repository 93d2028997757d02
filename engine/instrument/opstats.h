#pragma once
// Per-op statistics, always on: every oneDNN primitive (and optimizer update) a device runs is
// registered once, when its plan is built, with its kind, shape and the FLOPs and bytes one call
// does (computed from the shapes: the compulsory traffic, each tensor read or written once). Each
// execution is timed by an OpTimer (two clock reads and two relaxed atomic adds); while a trace is
// on it is also a zone. OpStats::snapshot() sums the ops of one kind and shape.
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "engine/instrument/instrument.h"

namespace trainbench::engine::prof {

// What one call of an op costs, from its shapes.
struct OpCost {
    std::string kind;   // "inner_product_forward", "convolution_backward_weights", "pooling_forward",
                        // "eltwise_relu_forward", "reorder", "adam_update", ...
    std::string shape;  // e.g. "src 128x784, weights 512x784, dst 128x512"
    double flops = 0.0; // floating-point operations per call
    double bytes = 0.0; // bytes read and written per call (each tensor once)
};

class OpStat {
public:
    explicit OpStat(OpCost cost);
    const OpCost& cost() const { return cost_; }
    const ZoneSite* site() const { return &site_; }
    void add(int64_t ns) {
        calls_.fetch_add(1, std::memory_order_relaxed);
        ns_.fetch_add(ns, std::memory_order_relaxed);
    }
    int64_t calls() const { return calls_.load(std::memory_order_relaxed); }
    int64_t nanoseconds() const { return ns_.load(std::memory_order_relaxed); }

private:
    OpCost cost_;
    std::string label_;  // "kind shape": the zone's name in traces
    ZoneSite site_;
    std::atomic<int64_t> calls_{0};
    std::atomic<int64_t> ns_{0};
};

// One row of a snapshot: every op of one kind and shape together.
struct OpRow {
    std::string kind;
    std::string shape;
    int64_t calls = 0;
    double seconds = 0.0;
    double flops = 0.0;  // per call
    double bytes = 0.0;  // per call
    double gflops() const { return seconds > 0 ? flops * static_cast<double>(calls) / seconds * 1e-9 : 0.0; }
    double gbytesPerSecond() const { return seconds > 0 ? bytes * static_cast<double>(calls) / seconds * 1e-9 : 0.0; }
    double intensity() const { return bytes > 0 ? flops / bytes : 0.0; }  // FLOP per byte
};

// The ops of one device. Registration takes a mutex (plan building, not the hot path); the
// returned pointer stays valid as long as the OpStats.
class OpStats {
public:
    OpStat* add(OpCost cost);
    // Sums by (kind, shape), in order of first registration; ops never called are left out.
    std::vector<OpRow> snapshot() const;

private:
    mutable std::mutex mutex_;
    std::deque<OpStat> ops_;
};

// Sums the rows of several devices (replicas) by (kind, shape).
std::vector<OpRow> mergeOpRows(const std::vector<std::vector<OpRow>>& perDevice);

// What `total` holds beyond an earlier snapshot `before` of the same stats: the calls made since, and
// their time. Rows with no calls since are left out.
std::vector<OpRow> opRowsSince(const std::vector<OpRow>& total, const std::vector<OpRow>& before);

// Times one execution of an op (null: nothing). Ops run during an evaluation (the thread's phase is
// Evaluation) are not counted: the statistics describe training steps.
class OpTimer {
public:
    explicit OpTimer(OpStat* op) noexcept {
        if constexpr (kEnabled) {
            if (op && detail::tlsPhase.current != static_cast<uint8_t>(Phase::Evaluation)) {
                op_ = op;
                begin_ = nowNs();
            }
        } else {
            (void)op;
        }
    }
    ~OpTimer() {
        if constexpr (kEnabled) {
            if (!op_) return;
            const int64_t end = nowNs();
            op_->add(end - begin_);
            if (tracing()) detail::record({op_->site(), begin_, end, __builtin_nan(""), TraceEvent::Kind::Zone});
        }
    }
    OpTimer(const OpTimer&) = delete;
    OpTimer& operator=(const OpTimer&) = delete;

private:
    OpStat* op_ = nullptr;
    int64_t begin_ = 0;
};

// Shape text helpers for OpCost::shape: "128x784".
std::string dimsText(const std::vector<int64_t>& dims);

}  // namespace trainbench::engine::prof
