#pragma once
// A real servable for the server's tests: one dense layer y = xW + b with weights known to the
// test (W[i][j] = ((3i + 5j) mod 11 - 5) / 8, b[j] = j / 4), computed on the CPU, so every answer
// can be checked against expectedDense(). Real work stands in for a model's cost: `overhead`
// iterations per call and `perExample` per example (a dependent chain of multiply-adds the
// compiler cannot drop), so a batch of n costs overhead + n·perExample and batching pays off
// measurably. An optional Gate holds every call until the test opens it, to fill the queue.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "engine/serving/servable.h"

namespace trainbench::engine::serving::test {

inline float denseWeight(int64_t i, int64_t j) { return static_cast<float>((3 * i + 5 * j) % 11 - 5) / 8.0f; }
inline float denseBias(int64_t j) { return static_cast<float>(j) / 4.0f; }

// The expected answers, in double precision, for examples of `inputs` numbers.
inline std::vector<double> expectedDense(const std::vector<float>& x, int64_t inputs, int64_t outputs) {
    const int64_t n = static_cast<int64_t>(x.size()) / inputs;
    std::vector<double> y(static_cast<size_t>(n * outputs));
    for (int64_t e = 0; e < n; ++e)
        for (int64_t j = 0; j < outputs; ++j) {
            double acc = denseBias(j);
            for (int64_t i = 0; i < inputs; ++i) acc += double(x[e * inputs + i]) * denseWeight(i, j);
            y[e * outputs + j] = acc;
        }
    return y;
}

// Holds model calls until opened; counts the calls that reached it.
class Gate {
public:
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        cv_.notify_all();
    }
    void pass() {
        ++entered_;
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return open_; });
    }
    int entered() const { return entered_.load(); }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
    std::atomic<int> entered_{0};
};

struct DenseCost {
    int64_t overhead = 0;    // iterations per call
    int64_t perExample = 0;  // iterations per example
};

class DenseInstance : public ModelInstance {
public:
    DenseInstance(int64_t inputs, int64_t outputs, DenseCost cost, std::shared_ptr<Gate> gate, bool fail)
        : inputs_(inputs), outputs_(outputs), cost_(cost), gate_(std::move(gate)), fail_(fail) {
        for (int64_t i = 0; i < inputs; ++i)
            for (int64_t j = 0; j < outputs; ++j) w_.push_back(denseWeight(i, j));
    }
    void predict(const float* x, int64_t n, float* out) override {
        if (gate_) gate_->pass();
        if (fail_) throw std::runtime_error("out of device memory (the test's failing model)");
        burn(cost_.overhead + n * cost_.perExample);
        for (int64_t e = 0; e < n; ++e)
            for (int64_t j = 0; j < outputs_; ++j) {
                float acc = denseBias(j);
                for (int64_t i = 0; i < inputs_; ++i) acc += x[e * inputs_ + i] * w_[i * outputs_ + j];
                out[e * outputs_ + j] = acc;
            }
    }
    static inline std::atomic<double> sink{0};

private:
    static void burn(int64_t iterations) {
        double v = 1.0;
        for (int64_t k = 0; k < iterations; ++k) v = v * 0.999999 + 1e-7;
        sink.store(v, std::memory_order_relaxed);
    }
    int64_t inputs_, outputs_;
    DenseCost cost_;
    std::shared_ptr<Gate> gate_;
    bool fail_;
    std::vector<float> w_;
};

inline Servable denseServable(std::vector<int64_t> inputShape = {4}, int64_t outputs = 3, DenseCost cost = {},
                              std::shared_ptr<Gate> gate = nullptr, bool fail = false) {
    Servable s;
    s.name = "dense";
    s.version = 1;
    s.inputShape = std::move(inputShape);
    s.outputs = outputs;
    const int64_t inputs = s.exampleSize();
    s.newInstance = [=] { return std::make_unique<DenseInstance>(inputs, outputs, cost, gate, fail); };
    return s;
}

}  // namespace trainbench::engine::serving::test
