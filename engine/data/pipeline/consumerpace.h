#pragma once
// How a prefetch producer waits for room in its queue without the trainer waking it. On a VM a
// wake-up across cores costs the thread that sends it tens of microseconds (measured: ~30 us on
// these 2-vCPU machines, whatever the woken thread then does), and a trainer that woke its
// producer after every batch would pay that in every step as input wait. So the trainer only
// records when it takes a batch, and a producer with a full queue looks again after a quarter of
// the trainer's time between batches: the queue holds `prefetch` batches, so it is refilled long
// before the trainer reaches its end. The trainer still wakes the producer when it finds the queue
// empty (it waits then anyway).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace trainbench::engine {

class ConsumerPace {
public:
    using Clock = std::chrono::steady_clock;
    // The trainer takes a batch at `now` (call under the queue's lock).
    void taken(Clock::time_point now) {
        if (last_) interval_ = 0.75 * interval_ + 0.25 * std::chrono::duration<double>(now - *last_).count();
        last_ = now;
    }
    // How long a producer with a full queue sleeps before it looks again (under the queue's lock).
    std::chrono::microseconds poll() const {
        const double quarter = std::clamp(interval_ / 4.0, kMinPoll, kMaxPoll);
        return std::chrono::microseconds(static_cast<int64_t>(quarter * 1e6));
    }

    static constexpr double kMinPoll = 50e-6, kMaxPoll = 2e-3;

private:
    std::optional<Clock::time_point> last_;
    double interval_ = 1e-3;  // seconds between batches, smoothed
};

}  // namespace trainbench::engine
