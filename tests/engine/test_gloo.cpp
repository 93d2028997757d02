// GlooCollective between real processes on loopback: every rank is a fresh test_glooworker process
// (tests/workers/glooworker.cpp), rank 0 serving the job's store as the chief does. All-reduce over
// 2, 3 and 4 ranks and sizes 0, 1, odd and 4 Mi floats against a naive sum, broadcast from every
// root, barrier; a rank with another job's token; a rank killed, or hung, in the middle of an all-reduce.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/collective/gloocollective.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/util/errors.h"
#include "glooprocesstest.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::ChildProcess;
using test::GlooProcessTest;
using test::linesStartingWith;

class GlooMatrixTest : public GlooProcessTest, public ::testing::WithParamInterface<int> {};

TEST_P(GlooMatrixTest, AllReduceBroadcastAndBarrierMatchANaiveReference) {
    const int n = GetParam();
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::string address = startChief(ranks, n, {"--scenario", "matrix"});
    ASSERT_FALSE(address.empty());
    for (int r = 1; r < n; ++r) ranks.push_back(spawn(r, n, {"--store", address, "--scenario", "matrix"}));
    std::vector<std::string> outs;
    for (int r = 0; r < n; ++r) {
        const auto result = ranks[r]->wait(180s);
        EXPECT_FALSE(result.timedOut) << "rank " << r;
        EXPECT_EQ(result.exitCode, 0) << "rank " << r << ": " << ranks[r]->err();
        outs.push_back(ranks[r]->out());
    }
    // Each rank checked its sums against the naive reference; all ranks must hold the same bits.
    const auto reference = linesStartingWith(outs[0], "allreduce ");
    EXPECT_EQ(reference.size(), 7u) << outs[0];
    for (int r = 1; r < n; ++r) EXPECT_EQ(linesStartingWith(outs[r], "allreduce "), reference) << "rank " << r;
    for (int r = 0; r < n; ++r) {
        EXPECT_EQ(linesStartingWith(outs[r], "broadcast ").size(), 4u * n) << outs[r];
        EXPECT_EQ(linesStartingWith(outs[r], "done").size(), 1u) << outs[r];
    }
    // Nobody left the barrier before the last rank (which arrived 150 ms x rank late) entered it.
    long long lastEnter = 0, firstLeave = 0;
    for (int r = 0; r < n; ++r) {
        const auto lines = linesStartingWith(outs[r], "barrier ");
        ASSERT_EQ(lines.size(), 1u) << outs[r];
        long long enter = 0, leave = 0;
        std::istringstream(lines[0].substr(8)) >> enter >> leave;
        lastEnter = std::max(lastEnter, enter);
        firstLeave = r == 0 ? leave : std::min(firstLeave, leave);
    }
    EXPECT_LE(lastEnter, firstLeave);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooMatrixTest, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& p) { return std::to_string(p.param) + "ranks"; });

TEST_F(GlooProcessTest, ARankWithAnotherJobsTokenIsRefusedAndTheOthersTimeOut) {
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::string address = startChief(ranks, 2, {"--scenario", "join", "--timeout-ms", "2000"});
    ASSERT_FALSE(address.empty());
    ranks.push_back(spawn(1, 2, {"--store", address, "--scenario", "join", "--timeout-ms", "2000"}, "another-job"));
    const auto stray = ranks[1]->wait(30s);
    EXPECT_EQ(stray.exitCode, 2) << ranks[1]->err();
    EXPECT_NE(ranks[1]->err().find("RendezvousError: rank 1 of 2: rendezvous store " + address), std::string::npos)
        << ranks[1]->err();
    EXPECT_NE(ranks[1]->err().find("wrong job token"), std::string::npos) << ranks[1]->err();
    // Rank 0 waits for rank 1's key until its timeout, then says which key, where.
    const auto chief = ranks[0]->wait(30s);
    EXPECT_EQ(chief.exitCode, 2) << ranks[0]->err();
    EXPECT_NE(ranks[0]->err().find("rank 0 of 2: joining the group: rendezvous store " + address +
                                   ": timed out after 2000 ms waiting for key(s)"),
              std::string::npos)
        << ranks[0]->err();
    EXPECT_NE(ranks[0]->err().find("1'"), std::string::npos) << "names rank 1's key: " << ranks[0]->err();
    EXPECT_NE(ranks[0]->err().find("wrong job token"), std::string::npos) << "the chief's store reports the refusal";
}

// Ranks start seconds apart (a loaded machine, a slow data load): with an arrival allowance longer
// than the operations' timeout a late rank still joins, and the others wait for it; a rank that
// never arrives fails the join within the allowance, naming the key it is missing.
TEST_F(GlooProcessTest, ALateRankJoinsWithinTheArrivalAllowanceNotTheOperationsTimeout) {
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::vector<std::string> args{"--scenario", "once", "--timeout-ms", "500", "--arrival-ms", "20000"};
    const std::string address = startChief(ranks, 2, args);
    ASSERT_FALSE(address.empty());
    std::this_thread::sleep_for(1500ms);  // three times the operations' timeout
    std::vector<std::string> late = args;
    late.insert(late.end(), {"--store", address});
    ranks.push_back(spawn(1, 2, late));
    for (int r = 0; r < 2; ++r) {
        const auto result = ranks[static_cast<size_t>(r)]->wait(60s);
        EXPECT_EQ(result.exitCode, 0) << "rank " << r << ": " << ranks[static_cast<size_t>(r)]->err();
    }

    std::vector<std::unique_ptr<ChildProcess>> alone;
    const std::string address2 = startChief(alone, 2, {"--scenario", "join", "--timeout-ms", "300", "--arrival-ms", "1500"});
    ASSERT_FALSE(address2.empty());
    const auto t0 = std::chrono::steady_clock::now();
    const auto failed = alone[0]->wait(60s);
    EXPECT_EQ(failed.exitCode, 2) << alone[0]->err();
    EXPECT_NE(alone[0]->err().find("rank 0 of 2: joining the group: rendezvous store "), std::string::npos)
        << alone[0]->err();
    EXPECT_NE(alone[0]->err().find(": timed out after 1500 ms waiting for key(s)"), std::string::npos)
        << alone[0]->err();
    EXPECT_NE(alone[0]->err().find("1'"), std::string::npos) << "names rank 1's key: " << alone[0]->err();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

// Three ranks all-reducing 1 Mi floats in a loop; rank 1 gets `sig` once all have finished one.
// Returns how long the other two took to fail, having checked they failed as they should (and
// that their message has `cause` in it, if given).
double othersFailAfterRank1Gets(GlooProcessTest& t, int sig, int timeoutMs, const std::string& cause) {
    const int n = 3;
    const std::vector<std::string> loop{"--scenario", "loop", "--timeout-ms", std::to_string(timeoutMs)};
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::string address = t.startChief(ranks, n, loop);
    if (address.empty()) return -1;
    for (int r = 1; r < n; ++r) {
        std::vector<std::string> args{"--store", address};
        args.insert(args.end(), loop.begin(), loop.end());
        ranks.push_back(t.spawn(r, n, args));
    }
    const auto readyBy = Clock::now() + 60s;
    const auto allReady = [&] {
        return std::all_of(ranks.begin(), ranks.end(),
                           [](auto& p) { return p->out().find("ready") != std::string::npos; });
    };
    while (!allReady() && Clock::now() < readyBy) std::this_thread::sleep_for(10ms);
    if (!allReady()) {
        ADD_FAILURE() << "not all ranks got going: " << ranks[0]->err() << ranks[1]->err() << ranks[2]->err();
        return -1;
    }
    ranks[1]->kill(sig);
    const auto t0 = Clock::now();
    for (int r : {0, 2}) {
        const auto result = ranks[r]->wait(60s);
        const std::string err = ranks[r]->err();
        EXPECT_FALSE(result.timedOut) << "rank " << r;
        EXPECT_EQ(result.signal, 0) << "rank " << r << " died of signal " << result.signal << " instead of reporting";
        EXPECT_EQ(result.exitCode, 3) << "rank " << r << ": " << err;
        EXPECT_NE(err.find("CollectiveError: rank " + std::to_string(r) +
                           " of 3: allReduceSum of 1048576 floats failed (timeout " + std::to_string(timeoutMs) +
                           " ms): "),
                  std::string::npos)
            << err;
        if (!cause.empty()) {
            EXPECT_NE(err.find(cause), std::string::npos) << err;
        }
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST_F(GlooProcessTest, ARankKilledMidAllReduceMakesTheOthersFailNamingTheOperation) {
    // Its closed connections are noticed at once; the 5 s timeout bounds it anyway (plus slack for a
    // busy machine). Writing to the dead peer must not end the others by SIGPIPE.
    // Gloo words it as the connection seen closed, reset, or a broken pipe, depending on the moment.
    const double seconds = othersFailAfterRank1Gets(*this, SIGKILL, 5000, "");
    EXPECT_GE(seconds, 0.0);
    EXPECT_LT(seconds, 15.0);
    RecordProperty("seconds_to_fail", std::to_string(seconds));
}

TEST_F(GlooProcessTest, AHungRankMakesTheOthersTimeOutNamingTheOperation) {
    // Alive, connected, silent: only the timeout ends the others' wait.
    const double seconds = othersFailAfterRank1Gets(*this, SIGSTOP, 2000, "Timed out");
    EXPECT_GE(seconds, 0.5);
    EXPECT_LT(seconds, 12.0);
    RecordProperty("seconds_to_fail", std::to_string(seconds));
}

TEST(GlooCollective, ASingleRankNeedsNoPeers) {
    RendezvousServerConfig config;
    config.token = RendezvousServer::randomToken();
    RendezvousServer server(config);
    GlooCollective c(0, 1, server.address(), config.token, 5s);
    EXPECT_EQ(c.rank(), 0);
    EXPECT_EQ(c.size(), 1);
    std::vector<float> x{1.5f, -2.0f, 3.0f};
    c.allReduceSum(x.data(), x.size());
    c.allReduceSum(nullptr, 0);
    c.broadcast(x.data(), x.size(), 0);
    c.barrier();
    EXPECT_EQ(x, (std::vector<float>{1.5f, -2.0f, 3.0f}));
    EXPECT_THROW(c.broadcast(x.data(), x.size(), 1), std::invalid_argument);
}

TEST(GlooCollective, RefusesARankOutsideTheGroupOrNoTimeout) {
    EXPECT_THROW(GlooCollective(2, 2, "127.0.0.1:1", "t", 1s), std::invalid_argument);
    EXPECT_THROW(GlooCollective(-1, 2, "127.0.0.1:1", "t", 1s), std::invalid_argument);
    EXPECT_THROW(GlooCollective(0, 0, "127.0.0.1:1", "t", 1s), std::invalid_argument);
    EXPECT_THROW(GlooCollective(0, 1, "127.0.0.1:1", "t", 0s), std::invalid_argument);
}

TEST(GlooCollective, AWrongTokenIsRefusedWithAClearMessage) {
    RendezvousServerConfig config;
    config.token = RendezvousServer::randomToken();
    config.report = [](const std::string&) {};
    RendezvousServer server(config);
    try {
        GlooCollective c(0, 2, server.address(), "token-of-another-job", 5s);
        ADD_FAILURE() << "joined with a wrong token";
    } catch (const RendezvousError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 0 of 2: rendezvous store " + server.address()), std::string::npos) << what;
        EXPECT_NE(what.find("wrong job token"), std::string::npos) << what;
    }
    EXPECT_EQ(server.rejectedConnections(), 1);
}

}  // namespace
}  // namespace trainbench::engine
