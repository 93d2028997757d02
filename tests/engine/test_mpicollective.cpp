// MpiCollective between real processes started by mpirun (tests/workers/mpiworker.cpp): sums exact
// on every rank, results bit-identical across ranks, a broadcast from the last rank; an overrunning
// operation ends the job within its timeout naming the rank and the operation; a process not started
// by an MPI launcher is refused with what to do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "childprocess.h"
#include "engine/collective/mpicollective.h"
#include "engine/util/errors.h"
#include "tests/mpisanitizers.h"

using namespace trainbench;
using engine::test::ChildProcess;

namespace {

// mpirun's arguments as trainbench's launcher gives them (app/job/mpiruntaskhost.cpp), the program
// put first by ChildProcess.
std::vector<std::string> mpirunArgs(int ranks, const std::string& scenario) {
    trainbench::testing::prepareMpiUnderSanitizers();
    std::vector<std::string> argv{"-np", std::to_string(ranks), "--bind-to", "none", "--oversubscribe",
                                  "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader",
                                  "--mca", "oob_tcp_if_include", "lo"};
    if (::geteuid() == 0) argv.emplace_back("--allow-run-as-root");
    argv.insert(argv.end(), {TRAINBENCH_MPI_WORKER, scenario});
    return argv;
}

std::filesystem::path outPrefix(const std::string& name) {
    return std::filesystem::path(::testing::TempDir()) / ("mpi-" + name + "-" + std::to_string(::getpid()));
}

std::vector<std::string> linesWith(const std::string& text, const std::string& what) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.find(what) != std::string::npos) out.push_back(line);
    return out;
}

}  // namespace

TEST(MpiCollective, ThreeRanksSumExactlyAndBroadcast) {
    ChildProcess job("/usr/bin/mpirun", mpirunArgs(3, "exact"), outPrefix("exact"));
    const auto r = job.wait(std::chrono::seconds(60));
    ASSERT_EQ(r.exitCode, 0) << job.out() << job.err();
    EXPECT_EQ(linesWith(job.out(), "all-reduce of 1001 exact").size(), 3u) << job.out();
    EXPECT_EQ(linesWith(job.out(), "all-reduce of 1048576 exact").size(), 3u) << job.out();
    EXPECT_EQ(linesWith(job.out(), "broadcast from rank 2 exact").size(), 3u) << job.out();
    for (int rank = 0; rank < 3; ++rank)
        EXPECT_EQ(linesWith(job.out(), "rank " + std::to_string(rank) + " of 3: done").size(), 1u) << job.out();
}

TEST(MpiCollective, EveryRankHoldsTheSameBits) {
    for (int ranks : {2, 3, 4}) {
        ChildProcess job("/usr/bin/mpirun", mpirunArgs(ranks, "random"), outPrefix("random"));
        const auto r = job.wait(std::chrono::seconds(60));
        ASSERT_EQ(r.exitCode, 0) << job.out() << job.err();
        const auto lines = linesWith(job.out(), ": hash ");
        ASSERT_EQ(lines.size(), static_cast<size_t>(ranks)) << job.out();
        std::set<std::string> hashes;
        for (const std::string& l : lines) hashes.insert(l.substr(l.find(": hash ")));
        EXPECT_EQ(hashes.size(), 1u) << ranks << " ranks disagree:\n" << job.out();
    }
}

TEST(MpiCollective, AnOverrunEndsTheJobWithinTheTimeoutNamingRankAndOperation) {
    const auto t0 = std::chrono::steady_clock::now();
    ChildProcess job("/usr/bin/mpirun", mpirunArgs(2, "hang"), outPrefix("hang"));
    const auto r = job.wait(std::chrono::seconds(60));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(r.timedOut);
    EXPECT_NE(r.exitCode, 0) << job.out() << job.err();
    EXPECT_LT(took, 20.0) << "rank 1 sleeps 30 s; the watchdog's timeout is 0.5 s";
    EXPECT_NE(job.err().find("rank 0 of 2: MPI all-reduce of 256 floats did not complete within 0.5 s"),
              std::string::npos)
        << job.err();
    EXPECT_EQ(job.out().find("completed"), std::string::npos) << job.out();
}

TEST(MpiCollective, OutsideAnMpiLauncherItSaysHowToStart) {
    if (engine::launchedByMpiLauncher()) GTEST_SKIP() << "this test process runs under an MPI launcher";
    try {
        engine::MpiCollective c(std::chrono::seconds(1));
        FAIL() << "a collective of one process was made";
    } catch (const engine::CollectiveError& e) {
        EXPECT_NE(std::string(e.what()).find("started by an MPI launcher (mpirun, srun --mpi=pmix)"), std::string::npos)
            << e.what();
    }
}
