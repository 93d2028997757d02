// The parameter-server virtual clock against figures worked out by hand: the pull and push of a
// model's bytes over one link, the update streamed through the servers' memory, the round bound by
// the servers once W·P/K crosses a worker's step, and records that follow it.
#include <gtest/gtest.h>

#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/parameterserverclock.h"
#include "tests/engine/modelspecs.h"
#include "tests/engine/optimizerconfigs.h"

namespace trainbench::engine {
namespace {

using test::adam;

using testmodels::custom;
using testmodels::dense;
using testmodels::flatten;

// 784 -> 10: 7,850 parameters, 31,400 bytes in fp32.
constexpr double kParams = 784 * 10 + 10;
constexpr double kBytes = kParams * 4;

ParameterServerClock clockOf(int workers, int servers, double gbps, double latencyUs, double serverGBs) {
    ParameterServerClockConfig c;
    c.device = DeviceCatalog::builtin().get("v100-sxm2-16gb");
    c.workers = workers;
    c.servers = servers;
    c.network = LinkParams::fromBandwidth(latencyUs * 1e-6, gbps * 1e9 / 8);
    c.server_memory_bytes_per_s = serverGBs * 1e9;
    return ParameterServerClock(c, custom({flatten, dense(10)}), Dims{1, 28, 28}, 10, adam());
}

TEST(ParameterServerClock, PullAndPushMoveTheParametersOverOneLink) {
    ParameterServerClock clock = clockOf(1, 1, 10.0, 25.0, 20.0);
    const ParameterServerStep& s = clock.stepCost(64);
    // 31,400 bytes at 1.25 GB/s plus 25 µs, each way.
    EXPECT_NEAR(s.pull_s, 25e-6 + kBytes / 1.25e9, 1e-15);
    EXPECT_NEAR(s.push_s, s.pull_s, 1e-15);
    // Adam reads a parameter, its gradient and two moments and writes three: 28 bytes each.
    EXPECT_NEAR(s.update_s, 28 * kParams / 20e9, 1e-15);
    // One worker, one server: the servers never wait on anyone else.
    EXPECT_EQ(s.bound, PsBound::Workers);
    EXPECT_DOUBLE_EQ(s.round_s, s.worker_s);
    EXPECT_EQ(s.queue_s, 0.0);
    EXPECT_NEAR(s.worker_s, s.pull_s + s.forward_s + s.backward_s + s.push_s + s.update_s + s.overhead_s, 1e-15);
    EXPECT_NEAR(s.overhead_s, 100e-6, 1e-12) << "the catalog's per-step overhead of a V100";
}

TEST(ParameterServerClock, ServersSpreadTheUpdate) {
    const double one = clockOf(2, 1, 10.0, 25.0, 20.0).stepCost(64).update_s;
    const double four = clockOf(2, 4, 10.0, 25.0, 20.0).stepCost(64).update_s;
    EXPECT_NEAR(four, one / 4, 1e-15);
}

TEST(ParameterServerClock, ServerLinksBoundTheRoundsWhenWorkersOutnumberThem) {
    // 0.01 Gbit/s: a pull is 25 ms, far more than the rest of the step. A worker's step is about two
    // transfers; a server's link carries W of them per round (each way): the servers bound from W = 3.
    for (int workers : {1, 2, 3, 6}) {
        SCOPED_TRACE(workers);
        ParameterServerClock clock = clockOf(workers, 1, 0.01, 10.0, 1e5);
        const ParameterServerStep& s = clock.stepCost(32);
        const double transfer = kBytes / 1.25e6;
        EXPECT_NEAR(s.server_link_s, workers * transfer, 1e-12);
        if (workers <= 2) {
            EXPECT_EQ(s.bound, PsBound::Workers);
            EXPECT_DOUBLE_EQ(s.round_s, s.worker_s);
        } else {
            EXPECT_EQ(s.bound, PsBound::ServerLinks);
            EXPECT_NEAR(s.round_s, workers * transfer, 1e-12);
            EXPECT_NEAR(s.queue_s, s.round_s - s.worker_s, 1e-12);
            EXPECT_GT(s.queue_s, 0.0);
        }
        // W workers take W steps per round.
        EXPECT_NEAR(s.jobStep().seconds(), s.round_s / workers, 1e-12);
    }
    // Twice the servers halve each server's load: 6 workers on 2 servers wait as 3 do on 1.
    const ParameterServerStep six = clockOf(6, 2, 0.01, 10.0, 1e5).stepCost(32);
    const ParameterServerStep three = clockOf(3, 1, 0.01, 10.0, 1e5).stepCost(32);
    EXPECT_NEAR(six.round_s, three.round_s, 1e-12);
}

TEST(ParameterServerClock, SlowServerMemoryBoundsTheRounds) {
    // 1 MB/s: an update of 219,800 bytes takes 0.22 s; four of them per round on one server.
    ParameterServerClock clock = clockOf(4, 1, 100.0, 10.0, 0.001);
    const ParameterServerStep& s = clock.stepCost(32);
    EXPECT_EQ(s.bound, PsBound::ServerUpdates);
    EXPECT_NEAR(s.round_s, 4 * 28 * kParams / 1e6, 1e-12);
    EXPECT_EQ(psBoundName(s.bound), "server updates");
}

TEST(ParameterServerClock, RecordsTheJobsShareAndTheWorkersOwnStep) {
    ParameterServerClock clock = clockOf(3, 1, 0.01, 10.0, 1e5);
    const ParameterServerStep& s = clock.stepCost(32);
    StepRecord rec;
    rec.samples = 32;
    rec.step_seconds = 123.0;  // the host's: replaced
    rec.replicas.push_back(ReplicaStep{});
    rec.replicas[0].rank = 2;
    rec.replicas[0].samples = 32;
    clock.step(rec);
    EXPECT_NEAR(rec.step_seconds, s.round_s / 3, 1e-15);
    EXPECT_NEAR(rec.input_seconds + rec.forward_seconds + rec.backward_seconds + rec.optimizer_seconds +
                    rec.exposed_comm_seconds + rec.other_seconds,
                rec.step_seconds, 1e-15);
    EXPECT_NEAR(rec.comm_seconds, s.pull_s + s.push_s, 1e-15);
    EXPECT_NEAR(rec.wait_seconds, s.queue_s, 1e-15);
    const ReplicaStep& w = rec.replicas[0];
    EXPECT_EQ(w.rank, 2);
    EXPECT_NEAR(w.compute_seconds, s.forward_s + s.backward_s, 1e-15);
    EXPECT_NEAR(w.comm_seconds + w.compute_seconds + w.optimizer_seconds + w.wait_seconds + s.overhead_s + s.input_s,
                s.round_s, 1e-12);
    // The same record again (an asynchronous step comes back with its worker's figures): same charge.
    StepRecord again = rec;
    clock.step(again);
    EXPECT_EQ(again.step_seconds, rec.step_seconds);
}

TEST(ParameterServerClock, RejectsImpossibleJobs) {
    ParameterServerClockConfig c;
    c.device = DeviceCatalog::builtin().get("v100-sxm2-16gb");
    c.network = LinkParams::fromBandwidth(1e-5, 1e9);
    c.server_memory_bytes_per_s = 1e9;
    c.servers = 0;
    EXPECT_THROW(ParameterServerClock(c, custom({flatten, dense(10)}), Dims{1, 28, 28}, 10, adam()),
                 std::invalid_argument);
    c.servers = 1;
    c.server_memory_bytes_per_s = 0;
    EXPECT_THROW(ParameterServerClock(c, custom({flatten, dense(10)}), Dims{1, 28, 28}, 10, adam()),
                 std::invalid_argument);
}

}  // namespace
}  // namespace trainbench::engine
