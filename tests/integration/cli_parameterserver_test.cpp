// parameter_server end to end: `trainbench-cli run` starts a chief (the coordinator), workers and
// parameter servers as real processes on loopback. With one worker the job is one device's run
// step for step; with several it converges with stale gradients, which it records; a lost worker's
// step goes to another worker, and a stopped one (SIGSTOP) is ended; a lost parameter server fails
// the job at once, naming it, and a restart resumes from the checkpoint; a stopped chief or
// parameter server fails it within 3 x strategy.timeout_s, naming it, leaving nothing behind; tasks
// started by hand give up on a stopped chief on their own.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "profiler/store/runstore.h"
#include "profiler/store/storeerror.h"
#include "tests/integration/clirunner.h"
#include "tests/integration/multiworkerjob.h"

using namespace trainbench;
using trainbench::testing::becomesTrue;
using trainbench::testing::CliProcess;
using trainbench::testing::Launch;
using trainbench::testing::LongJob;
using trainbench::testing::runCli;
using trainbench::testing::stepsOf;
using trainbench::testing::TempDir;
using trainbench::testing::writeExperiment;

namespace {

std::optional<profiler::RunRow> runOf(const std::string& db, const std::string& name) {
    if (!std::filesystem::exists(db)) return std::nullopt;
    try {
        return profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).findRun(name);
    } catch (const profiler::StoreError&) {
        return std::nullopt;  // created but not yet set up by the chief
    }
}

std::map<std::string, std::string> attributesOf(const std::string& db, const profiler::RunRow& row) {
    std::map<std::string, std::string> a;
    for (auto& [k, v] : profiler::RunStore::open(db, profiler::OpenMode::ReadOnly).attributes(row.id)) a[k] = v;
    return a;
}

pid_t taskOnceTrained(const std::string& db, const std::string& name, const std::string& experiment,
                      const std::string& type, int index, size_t minSteps) {
    return trainbench::testing::taskOnceTrained(db, name, experiment, type, index, minSteps,
                                                std::chrono::milliseconds(50));
}

// Ports free on 127.0.0.1 now (held together so that they differ).
std::vector<int> freeLoopbackPorts(int n) {
    std::vector<int> fds, ports;
    for (int i = 0; i < n; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
        fds.push_back(fd);
        ports.push_back(ntohs(a.sin_port));
    }
    for (int fd : fds) ::close(fd);
    return ports;
}

const std::string kTwoWorkers =
    "\"type\": \"parameter_server\", \"replicas\": 2, \"threads_per_replica\": 1, \"batch_scope\": \"per_replica\"";

}  // namespace

// One worker, one server: nothing is stale, and every update is the one one device makes, so the
// losses are one device's.
TEST(CliParameterServer, OneWorkerFollowsOneDevice) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    auto single = runCli({"run", writeExperiment(tmp.path, "single", 64, 40, ""), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(single.exitCode, 0) << single.err;
    const auto reference = stepsOf(db, "single");
    ASSERT_EQ(reference.size(), 40u);
    for (int servers : {1, 2}) {
        const std::string name = "ps" + std::to_string(servers);
        auto job = runCli({"run",
                           writeExperiment(tmp.path, name, 64, 40,
                                           "\"type\": \"parameter_server\", \"replicas\": 1, \"parameter_servers\": " +
                                               std::to_string(servers)),
                           "--db", db, "-q"},
                          tmp.path);
        ASSERT_EQ(job.exitCode, 0) << job.err << job.out;
        const auto steps = stepsOf(db, name);
        ASSERT_EQ(steps.size(), 40u);
        for (size_t i = 0; i < steps.size(); ++i) {
            EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
            EXPECT_NEAR(steps[i].loss, reference[i].loss, 1e-6 * reference[i].loss) << servers << " server(s), step " << i + 1;
        }
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun(name);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->strategy, "parameter_server");
        EXPECT_EQ(row->replicas, 1);
        const auto updates = store.psUpdates(row->id);
        ASSERT_EQ(updates.size(), 40u * static_cast<size_t>(servers));
        for (const auto& u : updates) EXPECT_EQ(u.update.staleness, 0) << "step " << u.step;
    }
}

// Two workers pushing asynchronously to one or two servers: the job learns W1 about as well as one
// device does in as many steps, every step is recorded once with its worker, and
// staleness is recorded per update and summarised.
TEST(CliParameterServer, TwoWorkersConvergeAndRecordStaleness) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // One device on the same batches and steps: what the asynchronous job should come close to.
    // Evaluated on 5,000 test images: on 500, one evaluation's sampling error alone (±1.8 points)
    // made the comparison below fail now and then.
    constexpr int kTestImages = 5000;
    auto single = runCli({"run", writeExperiment(tmp.path, "single", 64, 400, "", 100, kTestImages), "--db", db, "-q"},
                         tmp.path);
    ASSERT_EQ(single.exitCode, 0) << single.err;
    const auto reference = runOf(db, "single");
    ASSERT_TRUE(reference && reference->best_accuracy);
    // Mean training loss over the last 100 steps.
    auto lateLoss = [](const std::vector<profiler::StepSample>& steps) {
        double sum = 0;
        for (size_t i = steps.size() - 100; i < steps.size(); ++i) sum += steps[i].loss;
        return sum / 100;
    };
    const double referenceLoss = lateLoss(stepsOf(db, "single"));
    for (int servers : {1, 2}) {
        const std::string name = "async" + std::to_string(servers);
        const std::string x = writeExperiment(tmp.path, name, 64, 400,
                                              kTwoWorkers + ", \"parameter_servers\": " + std::to_string(servers), 100,
                                              kTestImages);
        auto job = runCli({"run", x, "--db", db, "-q"}, tmp.path);
        ASSERT_EQ(job.exitCode, 0) << job.err << job.out;
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun(name);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->status, profiler::RunStatus::Completed);
        EXPECT_EQ(row->devices, "cpu:1x2");
        ASSERT_TRUE(row->best_accuracy);
        // Stale gradients cost a little, and which worker pushes first varies from run to run: the
        // best of the four evaluations, and the late training loss, against one device's.
        EXPECT_GT(*row->best_accuracy, *reference->best_accuracy - 0.05)
            << servers << " server(s); one device reached " << *reference->best_accuracy;
        EXPECT_GT(*row->best_accuracy, 0.75) << servers << " server(s)";

        const auto steps = store.steps(row->id);
        ASSERT_EQ(steps.size(), 400u);
        for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
        EXPECT_LT(lateLoss(steps), 1.3 * referenceLoss) << servers << " server(s)";
        EXPECT_LT(lateLoss(steps), 0.3 * steps.front().loss) << servers << " server(s)";
        const auto workers = store.replicaSteps(row->id);
        ASSERT_EQ(workers.size(), 400u) << "one worker per step";
        int64_t perWorker[2] = {0, 0};
        for (const auto& w : workers) {
            ASSERT_GE(w.replica.rank, 0);
            ASSERT_LT(w.replica.rank, 2);
            ++perWorker[w.replica.rank];
            EXPECT_EQ(w.replica.samples, 64);
        }
        EXPECT_GT(perWorker[0], 40) << "both workers trained";
        EXPECT_GT(perWorker[1], 40) << "both workers trained";

        const auto updates = store.psUpdates(row->id);
        ASSERT_EQ(updates.size(), 400u * static_cast<size_t>(servers));
        int64_t stale = 0, maxStaleness = 0;
        double sum = 0;
        for (const auto& u : updates) {
            EXPECT_GE(u.update.staleness, 0);
            stale += u.update.staleness > 0;
            maxStaleness = std::max(maxStaleness, u.update.staleness);
            sum += static_cast<double>(u.update.staleness);
        }
        EXPECT_GT(stale, 0) << "two workers computing at once push onto values the other has changed";
        const auto a = attributesOf(db, *row);
        EXPECT_EQ(a.at("ps.servers"), std::to_string(servers));
        EXPECT_EQ(a.at("ps.updates"), std::to_string(updates.size()));
        EXPECT_EQ(a.at("ps.staleness_max"), std::to_string(maxStaleness));
        EXPECT_NEAR(std::stod(a.at("ps.staleness_mean")), sum / static_cast<double>(updates.size()), 0.01);
        EXPECT_EQ(a.at("ps.rescheduled_steps"), "0");

        auto show = runCli({"show", name, "--db", db}, tmp.path);
        EXPECT_NE(show.out.find("parameter servers (" + std::to_string(servers) + ")"), std::string::npos) << show.out;
        EXPECT_NE(show.out.find("staleness       mean"), std::string::npos) << show.out;
        auto csv = runCli({"export", name, "--db", db, "--csv", "--series", "updates"}, tmp.path);
        EXPECT_EQ(csv.exitCode, 0) << csv.err;
        EXPECT_EQ(csv.out.rfind("step,server,worker,attempt,staleness\n", 0), 0u) << csv.out.substr(0, 200);
    }
}

// A worker killed with SIGKILL: its step goes to the other worker, training continues and the run
// completes with every step once.
TEST(CliParameterServer, AKilledWorkersStepIsRerunElsewhere) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "lossy", 64, 600, kTwoWorkers);
    CliProcess job({"run", x, "--db", db, "-q"}, tmp.path);
    const pid_t worker = taskOnceTrained(db, "lossy", x, "worker", 1, 50);
    ASSERT_GT(worker, 0) << "no worker process found";
    ::kill(worker, SIGKILL);
    const auto result = job.wait();
    ASSERT_EQ(result.exitCode, 0) << result.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("lossy");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    const auto steps = store.steps(row->id);
    ASSERT_EQ(steps.size(), 600u);
    const auto a = attributesOf(db, *row);
    EXPECT_EQ(a.at("ps.lost_workers"), "1");
    EXPECT_LE(std::stoll(a.at("ps.rescheduled_steps")), 1) << "it had at most one step";
    // After the loss only worker 0 trains.
    const auto workers = store.replicaSteps(row->id);
    ASSERT_EQ(workers.size(), 600u);
    EXPECT_EQ(workers.back().replica.rank, 0);
}

// A worker stopped with SIGSTOP says nothing more: after strategy.timeout_s it is taken as lost and
// its step runs elsewhere.
TEST(CliParameterServer, AHungWorkerIsReplacedAfterTheTimeout) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "hung", 64, 400, kTwoWorkers + ", \"timeout_s\": 2");
    CliProcess job({"run", x, "--db", db, "-q"}, tmp.path);
    const pid_t worker = taskOnceTrained(db, "hung", x, "worker", 0, 50);
    ASSERT_GT(worker, 0) << "no worker process found";
    ::kill(worker, SIGSTOP);
    const auto result = job.wait();  // the launcher ends the stopped worker
    ::kill(worker, SIGKILL);         // should it have been left
    ASSERT_EQ(result.exitCode, 0) << result.err;
    EXPECT_TRUE(trainbench::testing::taskProcesses(x).empty()) << "a task of the job is left running";
    const auto row = runOf(db, "hung");
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, profiler::RunStatus::Completed);
    EXPECT_EQ(stepsOf(db, "hung").size(), 400u);
    const auto a = attributesOf(db, *row);
    EXPECT_EQ(a.at("ps.lost_workers"), "1");
}

// The launcher does not keep a stopped worker until the job ends: stopped for strategy.timeout_s,
// it is ended and named with its address, and the job goes on with the other worker.
TEST(CliParameterServer, AStoppedWorkerIsEndedWhileTheJobGoesOn) {
    TempDir tmp;
    LongJob job(tmp, "stopped-worker", kTwoWorkers + ", \"timeout_s\": 2", /*quiet=*/false);
    const pid_t worker = taskOnceTrained(job.db, job.name, job.experiment, "worker", 0, 20);
    ASSERT_GT(worker, 0) << "no worker process found";
    const auto stoppedAt = std::chrono::steady_clock::now();
    ::kill(worker, SIGSTOP);
    const std::string ended = "parameter_server job: worker 0 (pid " + std::to_string(worker) + ", 127.0.0.1:";
    const bool named = trainbench::testing::becomesTrue(
        [&] { return job.process.currentErr().find(ended) != std::string::npos; }, std::chrono::seconds(30));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stoppedAt).count();
    const size_t stepsThen = stepsOf(job.db, job.name).size();
    const bool goesOn = trainbench::testing::becomesTrue(
        [&] { return stepsOf(job.db, job.name).size() >= stepsThen + 50; }, std::chrono::seconds(30));
    job.process.signal(SIGINT);  // the user stops the job
    const auto result = job.process.waitFor(std::chrono::seconds(60));
    ::kill(worker, SIGKILL);  // should the launcher have left it
    ASSERT_TRUE(named) << "the stopped worker was not ended within 30 s: " << job.process.currentErr();
    std::printf("[ measured ] parameter_server, worker stopped: ended %.2f s later, the job went on (timeout_s 2)\n", took);
    EXPECT_LT(took, 6.0) << "3 x timeout_s";
    EXPECT_TRUE(goesOn) << "the other worker trained on";
    const std::string& err = job.process.currentErr();
    EXPECT_NE(err.find(") was stopped (SIGSTOP or a debugger) for "), std::string::npos) << err;
    EXPECT_NE(err.find("; its steps go to the other workers"), std::string::npos) << err;
    ASSERT_TRUE(result) << "the job did not stop within 60 s";
    EXPECT_EQ(result->exitCode, 130) << result->err;
    EXPECT_TRUE(trainbench::testing::taskProcesses(job.experiment).empty()) << "a task of the job is left running";
}

// A chief or a parameter server that stops (SIGSTOP: a frozen host, a debugger) makes no progress
// and says nothing more; the job cannot go on without it. Within 3 x strategy.timeout_s the job
// fails naming the stopped task (pid, address), the run is recorded failed with the step, and no
// process of the job is left.
TEST(CliParameterServer, AStoppedChiefOrServerFailsTheJobWithinThreeTimeouts) {
    using trainbench::testing::expectAStoppedTaskFailsTheJob;
    expectAStoppedTaskFailsTheJob("parameter_server", kTwoWorkers, "chief", "the chief (pid ", 20, 3);
    expectAStoppedTaskFailsTheJob("parameter_server", kTwoWorkers, "ps", "parameter server 0 (pid ", 20, 3);
}

// A parameter server killed mid-run: the variables it held are gone, so the job fails at once with
// an error naming it; with restarts allowed, the job resumes from its last checkpoint and completes.
TEST(CliParameterServer, ALostServerFailsFastAndARestartResumes) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    {
        const std::string x = writeExperiment(tmp.path, "doomed", 64, 100000,
                                              kTwoWorkers + ", \"timeout_s\": 120, \"max_restarts\": 0");
        CliProcess job({"run", x, "--db", db, "-q", "--set", "data.train_limit=6400"}, tmp.path);
        const pid_t server = taskOnceTrained(db, "doomed", x, "ps", 0, 20);
        ASSERT_GT(server, 0) << "no parameter server process found";
        const auto killedAt = std::chrono::steady_clock::now();
        ::kill(server, SIGKILL);
        const auto result = job.wait();
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
        EXPECT_EQ(result.exitCode, 1) << result.err;
        // Half the timeout: a loaded machine (sanitizers, parallel tests) must not make it flaky.
        EXPECT_LT(took, 60.0) << "a dead server is noticed long before the 120 s timeout";
        EXPECT_NE(result.err.find("parameter server 0"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("killed by signal 9"), std::string::npos) << result.err;
        const auto row = runOf(db, "doomed");
        ASSERT_TRUE(row && row->message);
        EXPECT_EQ(row->status, profiler::RunStatus::Failed);
        EXPECT_NE(row->message->find("parameter server 0 at 127.0.0.1:"), std::string::npos) << *row->message;
        EXPECT_GE(stepsOf(db, "doomed").size(), 20u) << "steps recorded before the failure are kept";
    }
    {
        const std::string x = writeExperiment(tmp.path, "resumed", 64, 300, kTwoWorkers);
        CliProcess job({"run", x, "--db", db, "-q", "--set", "train.checkpoint_every_steps=25"}, tmp.path);
        const pid_t server = taskOnceTrained(db, "resumed", x, "ps", 0, 60);
        ASSERT_GT(server, 0) << "no parameter server process found";
        ::kill(server, SIGKILL);
        const auto result = job.wait();
        ASSERT_EQ(result.exitCode, 0) << result.err;
        EXPECT_NE(result.err.find("restarting every task from the last checkpoint"), std::string::npos) << result.err;
        auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun("resumed");
        ASSERT_TRUE(row);
        EXPECT_EQ(row->status, profiler::RunStatus::Completed);
        const auto steps = store.steps(row->id);
        ASSERT_EQ(steps.size(), 300u);
        for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
        const auto a = attributesOf(db, *row);
        EXPECT_EQ(a.at("job.restarts"), "1");
        const int64_t resumedFrom = std::stoll(a.at("job.resumed_from_step"));
        EXPECT_EQ(resumedFrom % 25, 0);
        EXPECT_GE(resumedFrom, 50) << "killed after step 60: at most one interval is lost";
    }
}

// Tasks started by hand, as on a cluster, with no launcher to end them: when the chief stops
// (SIGSTOP), the worker and the parameter server give up on it after strategy.timeout_s on their
// own, naming it, where they used to wait for it forever.
TEST(CliParameterServer, TasksStartedByHandGiveUpOnAStoppedChief) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string x = writeExperiment(tmp.path, "by-hand", 64, 100000,
                                          "\"type\": \"parameter_server\", \"replicas\": 1, \"timeout_s\": 2");
    const std::vector<int> ports = freeLoopbackPorts(3);
    const std::string chiefAddress = "127.0.0.1:" + std::to_string(ports[0]);
    auto start = [&](const std::string& type) {
        const std::string tfConfig = R"({"cluster": {"chief": [")" + chiefAddress + R"("], "worker": ["127.0.0.1:)" +
                                     std::to_string(ports[1]) + R"("], "ps": ["127.0.0.1:)" + std::to_string(ports[2]) +
                                     R"("]}, "task": {"type": ")" + type + R"(", "index": 0}})";
        return std::make_unique<CliProcess>(
            std::vector<std::string>{"worker", x, "--db", db, "-q", "--set", "data.train_limit=6400"}, tmp.path,
            Launch{{}, {"TF_CONFIG=" + tfConfig, "TRAINBENCH_JOB_TOKEN=by-hand-" + std::to_string(::getpid())}});
    };
    auto chief = start("chief");
    auto worker = start("worker");
    auto server = start("ps");
    ASSERT_TRUE(becomesTrue([&] { return stepsOf(db, "by-hand").size() >= 20; }, std::chrono::seconds(60)))
        << "the job did not train: " << chief->currentErr() << worker->currentErr() << server->currentErr();
    chief->signal(SIGSTOP);
    const auto stoppedAt = std::chrono::steady_clock::now();
    const auto w = worker->waitFor(std::chrono::seconds(20));
    const double workerTook = std::chrono::duration<double>(std::chrono::steady_clock::now() - stoppedAt).count();
    const auto s = server->waitFor(std::chrono::seconds(20));
    const double serverTook = std::chrono::duration<double>(std::chrono::steady_clock::now() - stoppedAt).count();
    chief->signal(SIGKILL);  // and the rest, should they still run, when their CliProcess goes
    ASSERT_TRUE(w) << "the worker still waits 20 s after its chief stopped (timeout_s 2)";
    ASSERT_TRUE(s) << "the parameter server still waits 20 s after its chief stopped (timeout_s 2)";
    std::printf("[ measured ] parameter_server by hand, chief stopped: the worker gave up %.2f s later, the server "
                "%.2f s later (timeout_s 2)\n",
                workerTook, serverTook);
    EXPECT_EQ(w->exitCode, 1) << w->err;
    EXPECT_NE(w->err.find("the coordinator at " + chiefAddress + " sent nothing for 2 s (stopped, hung or cut off)"),
              std::string::npos)
        << w->err;
    EXPECT_EQ(s->exitCode, 1) << s->err;
    EXPECT_NE(s->err.find(": the coordinator (127.0.0.1:"), std::string::npos) << s->err;
    EXPECT_NE(s->err.find(") sent nothing for 2 s (stopped, hung or cut off)"), std::string::npos) << s->err;
    EXPECT_LT(workerTook, 6.0) << "3 x timeout_s";
    EXPECT_LT(serverTook, 6.0) << "3 x timeout_s";
}
