// multi_worker across two hosts: two network namespaces joined by a veth pair stand in for two
// machines (tests/integration/twohosts.h). The chief runs `trainbench-cli worker` in one and the
// worker in the other, with TF_CONFIG and the job token in their environment, as a user starts a job
// by hand. Neither namespace can reach the other's loopback, so a job that trains at all has its
// rendezvous store and its Gloo transport listening on the namespaces' own addresses. Skipped,
// saying which command failed, where namespaces cannot be made (not root, a container without them).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "profiler/store/runstore.h"
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
