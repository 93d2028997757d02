#pragma once
// Waiting for a condition with a deadline, for tests of things that happen on other threads or in
// other processes.
#include <chrono>
#include <thread>

namespace trainbench::testing {

// Whether `done()` becomes true within `limit`, looking every 10 ms.
template <class Done, class Rep, class Period>
bool becomesTrue(Done done, std::chrono::duration<Rep, Period> limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace trainbench::testing
