// The virtual clock under host load: the same experiment on an emulated TPU slice gives the same
// virtual-time curve while two threads spin on this machine's cores — its infeed included: the
// first run measures the host pipeline's rate into the store, the second reuses it. Serial (ctest RUN_SERIAL): the
// load it makes must not slow other tests' real-time deadlines.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/emulatedruns.h"

using namespace trainbench;
using trainbench::testing::TempDir;
using namespace trainbench::testing::emulated;

TEST(CliEmulated, VirtualTimeDoesNotDependOnTheHostsLoad) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // No pinned infeed: the host's own rate is measured.
    const char* slice = R"("strategy": {"type": "tpu_pod", "slice": "v3-32"}, "device": {"type": "tpu-v3"})";
    const Recorded quiet = runOne(tmp, db, "quiet", slice);
    // Two threads spinning on this machine's cores while the same experiment runs again.
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    for (int i = 0; i < 2; ++i)
        load.emplace_back([&] {
            volatile double x = 1;
            while (!stop) x = x * 1.0000001 + 1e-9;
        });
    const Recorded busy = runOne(tmp, db, "busy", slice);
    stop = true;
    for (auto& t : load) t.join();
    ASSERT_EQ(quiet.steps.size(), busy.steps.size());
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    std::map<std::string, std::string> quietAttributes, busyAttributes;
    for (const auto& [k, v] : store.attributes(quiet.row.id)) quietAttributes[k] = v;
    for (const auto& [k, v] : store.attributes(busy.row.id)) busyAttributes[k] = v;
    EXPECT_EQ(quietAttributes.at("virtual.infeed_source"), "measured now on this host");
    EXPECT_EQ(busyAttributes.at("virtual.infeed_source").rfind("this host's rate measured 20", 0), 0u)
        << busyAttributes.at("virtual.infeed_source");
    EXPECT_EQ(quietAttributes.at("virtual.infeed_seconds_per_batch"), busyAttributes.at("virtual.infeed_seconds_per_batch"));
    for (size_t i = 0; i < quiet.steps.size(); ++i) {
        EXPECT_EQ(quiet.steps[i].step_seconds, busy.steps[i].step_seconds);
        EXPECT_EQ(quiet.steps[i].wall_seconds, busy.steps[i].wall_seconds);
    }
    for (size_t i = 0; i < quiet.evals.size() && i < busy.evals.size(); ++i)
        EXPECT_EQ(quiet.evals[i].wall_seconds, busy.evals[i].wall_seconds);
}

