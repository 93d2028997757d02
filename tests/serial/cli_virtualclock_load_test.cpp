// The virtual clock under host load: the same experiment on an emulated TPU slice gives the same
// virtual-time curve while two threads spin on this machine's cores. Serial (ctest RUN_SERIAL): the
// load it makes must not slow other tests' real-time deadlines.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/integration/emulatedruns.h"

using namespace trainbench;
using trainbench::testing::TempDir;
using namespace trainbench::testing::emulated;

TEST(CliEmulated, VirtualTimeDoesNotDependOnTheHostsLoad) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const Recorded quiet = runOne(tmp, db, "quiet", kSlice);
    // Two threads spinning on this machine's cores while the same experiment runs again.
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    for (int i = 0; i < 2; ++i)
        load.emplace_back([&] {
            volatile double x = 1;
            while (!stop) x = x * 1.0000001 + 1e-9;
        });
    const Recorded busy = runOne(tmp, db, "busy", kSlice);
    stop = true;
    for (auto& t : load) t.join();
    ASSERT_EQ(quiet.steps.size(), busy.steps.size());
    for (size_t i = 0; i < quiet.steps.size(); ++i) {
        EXPECT_EQ(quiet.steps[i].step_seconds, busy.steps[i].step_seconds);
        EXPECT_EQ(quiet.steps[i].wall_seconds, busy.steps[i].wall_seconds);
    }
    for (size_t i = 0; i < quiet.evals.size() && i < busy.evals.size(); ++i)
        EXPECT_EQ(quiet.evals[i].wall_seconds, busy.evals[i].wall_seconds);
}

