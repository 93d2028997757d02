// multi_worker across two hosts: two network namespaces joined by a veth pair stand in for two
// machines (tests/integration/twohosts.h). The chief runs `trainbench-cli worker` in one and the
// worker in the other, with TF_CONFIG and the job token in their environment, as a user starts a job
// by hand. Neither namespace can reach the other's loopback, so a job that trains at all has its
// rendezvous store and its Gloo transport listening on the namespaces' own addresses; a stranger
// on the other host who connects to the chief's Gloo port is refused. Skipped,
// saying which command failed, where namespaces cannot be made (not root, a container without them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "profiler/store/runstore.h"
#include "tests/engine/stranger.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"
#include "tests/integration/twohosts.h"

using namespace trainbench;
using trainbench::testing::CliProcess;
using trainbench::testing::Launch;
using trainbench::testing::NetnsHost;
using trainbench::testing::runCli;
using trainbench::testing::stepsOf;
using trainbench::testing::TwoHosts;
using trainbench::testing::worstRelativeLossDifference;
using trainbench::testing::writeExperiment;

namespace {

// The existing equivalence test's job (cli_multiworker_test.cpp), so the same tolerance holds.
constexpr int kSteps = 50;
constexpr int kChiefPort = 29500, kWorkerPort = 29501;  // free: the namespaces are new
constexpr const char* kJob =
    "\"type\": \"multi_worker\", \"replicas\": 2, \"threads_per_replica\": 1, \"timeout_s\": 20";

class CliMultiHost : public ::testing::Test {
protected:
    void SetUp() override {
        std::string whyNot;
        hosts_ = TwoHosts::create(&whyNot);
        if (!hosts_) GTEST_SKIP() << "cannot make two network namespaces joined by veth to stand in for two hosts: "
                                  << whyNot;
    }

    // One task of the job: `type` "chief" in host A or "worker" in host B.
    std::unique_ptr<CliProcess> startTask(const std::string& type, const std::string& experiment,
                                          const std::string& token) {
        const NetnsHost& host = type == "chief" ? hosts_->a() : hosts_->b();
        const std::string tfConfig = R"({"cluster": {"chief": [")" + hosts_->a().address + ":" +
                                     std::to_string(kChiefPort) + R"("], "worker": [")" + hosts_->b().address +
                                     ":" + std::to_string(kWorkerPort) + R"("]}, "task": {"type": ")" + type +
                                     R"(", "index": 0}})";
        return std::make_unique<CliProcess>(std::vector<std::string>{"worker", experiment, "--db", db()}, tmp_.path,
                                            Launch{host.exec(), {"TF_CONFIG=" + tfConfig,
                                                                 "TRAINBENCH_JOB_TOKEN=" + token}});
    }
    std::string db() const { return (tmp_.path / "runs.db").string(); }

    // The namespaces outlive the tasks, which are locals of each test (a CliProcess not waited for is killed).
    std::unique_ptr<TwoHosts> hosts_;
    trainbench::testing::TempDir tmp_;
};

}  // namespace

TEST_F(CliMultiHost, AJobAcrossTwoHostsFollowsOneDevicesLossCurve) {
    auto single = runCli({"run", writeExperiment(tmp_.path, "single", 64, kSteps, ""), "--db", db(), "-q"}, tmp_.path);
    ASSERT_EQ(single.exitCode, 0) << single.err;
    const auto reference = stepsOf(db(), "single");
    ASSERT_EQ(reference.size(), static_cast<size_t>(kSteps));

    const std::string x = writeExperiment(tmp_.path, "two-hosts", 64, kSteps, kJob);
    const std::string token = "two-hosts-" + std::to_string(getpid());
    auto chief = startTask("chief", x, token);
    auto worker = startTask("worker", x, token);
    const auto c = chief->wait();
    const auto w = worker->wait();
    ASSERT_EQ(c.exitCode, 0) << "chief:\n" << c.err << "\nworker:\n" << w.err;
    ASSERT_EQ(w.exitCode, 0) << "worker:\n" << w.err;
    EXPECT_NE(c.err.find("joined the job as rank 0 of 2"), std::string::npos) << c.err;

    auto store = profiler::RunStore::open(db(), profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.listRuns().size(), 2u) << "only the chief records the job";
    const auto row = store.findRun("two-hosts");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    EXPECT_EQ(row->strategy, "multi_worker");
    EXPECT_EQ(row->devices, "cpu:1x2");
    EXPECT_EQ(row->replicas, 2);
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
    const double worst = worstRelativeLossDifference(steps, reference);
    EXPECT_LT(worst, 1e-5) << "losses differ from one device's by up to " << worst;
    const auto ranks = store.replicaSteps(row->id);
    ASSERT_EQ(ranks.size(), 2u * kSteps);
    for (size_t i = 0; i < ranks.size(); ++i) {
        EXPECT_EQ(ranks[i].replica.rank, static_cast<int>(i % 2));
        EXPECT_EQ(ranks[i].replica.samples, 32);
    }
}

TEST_F(CliMultiHost, ATaskWithAnotherTokenIsRefusedAndTheChiefSaysSo) {
    // The chief waits for a rank that never joins: a short timeout ends it.
    const std::string x = writeExperiment(tmp_.path, "intruded", 64, 5,
                                          "\"type\": \"multi_worker\", \"replicas\": 2, \"timeout_s\": 3");
    auto chief = startTask("chief", x, "the-job-token");
    auto intruder = startTask("worker", x, "another-token");
    const auto i = intruder->wait();
    const auto c = chief->wait();
    EXPECT_EQ(i.exitCode, 1) << i.err;
    EXPECT_NE(i.err.find("wrong job token"), std::string::npos) << i.err;
    EXPECT_EQ(c.exitCode, 1) << c.err;
    EXPECT_NE(c.err.find("wrong job token"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find(hosts_->b().address), std::string::npos) << "the chief names where it came from:\n" << c.err;
}

// A stranger on the other host connects to the chief's Gloo port, found as a scan would find it, before
// the worker joins. The port is on the chief's own address from the cluster spec (routable on the
// link; not loopback, not a wildcard); the stranger is refused and named, and the job trains.
TEST_F(CliMultiHost, AStrangerOnTheOtherHostIsRefusedFromGloosPortAndTheJobTrains) {
    using trainbench::engine::test::ListeningSocket;
    using trainbench::engine::test::Stranger;
    const std::string x = writeExperiment(tmp_.path, "scanned", 64, 5, kJob);
    const std::string token = "scanned-" + std::to_string(getpid());
    auto chief = startTask("chief", x, token);
    ListeningSocket port;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (port.port == 0 && std::chrono::steady_clock::now() < deadline) {
        for (const ListeningSocket& s : trainbench::engine::test::listeningSockets(chief->pid()))
            if (s.port != kChiefPort) port = s;  // the store's is the other one
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(port.port, 0) << "the chief never listened for its peer:\n" << chief->currentErr();
    EXPECT_EQ(port.ip, hosts_->a().address) << "Gloo listens on the host's own address, nowhere else";

    // Made from a thread that has entered host B's namespace: the socket stays there.
    std::unique_ptr<Stranger> stranger;
    std::thread([&] {
        const int ns = open(("/var/run/netns/" + hosts_->b().ns).c_str(), O_RDONLY | O_CLOEXEC);
        if (ns >= 0 && setns(ns, CLONE_NEWNET) == 0) stranger = std::make_unique<Stranger>(port);
        if (ns >= 0) close(ns);
    }).join();
    ASSERT_TRUE(stranger && stranger->connected()) << "cannot connect to " << port.text() << " from host B";
    const std::string http = "GET / HTTP/1.1\r\n\r\n";
    stranger->send(http.data(), http.size());
    EXPECT_TRUE(stranger->closedByPeerWithin(std::chrono::seconds(30)));

    auto worker = startTask("worker", x, token);
    const auto c = chief->wait();
    const auto w = worker->wait();
    EXPECT_EQ(c.exitCode, 0) << "chief:\n" << c.err << "\nworker:\n" << w.err;
    EXPECT_EQ(w.exitCode, 0) << "worker:\n" << w.err;
    EXPECT_EQ(stranger->address().rfind(hosts_->b().address + ":", 0), 0u) << stranger->address();
    EXPECT_NE(c.err.find("refused a connection from " + stranger->address() + " to " + port.text()), std::string::npos)
        << c.err;
    EXPECT_NE(c.err.find("not a trainbench Gloo hello (first bytes 47 45 54"), std::string::npos) << c.err;
    EXPECT_EQ(stranger->received(), 0u);
}
