// launch-script: the Slurm batch script runs a real multi_worker and a real parameter_server job
// (with stand-ins for scontrol and srun that start the tasks on this machine), and the Kubeflow
// manifest has the TFJob's shape.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/app/programoutput.h"
#include "tests/integration/clirunner.h"
#include "tests/mpisanitizers.h"

using namespace trainbench;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

void writeExecutable(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
    ::chmod(p.c_str(), 0755);
}

std::string launchExperiment(const std::filesystem::path& dir) {
    const auto path = dir / "job.json";
    std::ofstream(path) << R"({"name": "Slurm Job", "data": {"train_limit": 1280, "test_limit": 200},
        "model": {"preset": "logreg"}, "train": {"batch_size": 64, "epochs": 1, "eval_at_epoch_end": true},
        "strategy": {"type": "multi_worker", "replicas": 2, "threads_per_replica": 1, "timeout_s": 20}})";
    return path.string();
}

// Runs a generated Slurm script with stand-ins: `hosts` "nodes" on this machine (one loopback name
// each, as scontrol lists them) and an srun that starts one copy of its command per node with
// SLURM_PROCID set, as Slurm does. Returns the script's exit status; its output is in slurm.out.
// `lateTask`, if not negative, is the SLURM_PROCID whose task starts `lateSeconds` after the others.
// `fakeCli`, if given, is the text of a script that stands in for trainbench-cli.
int runSlurmScript(const std::filesystem::path& dir, const std::string& script, const std::vector<std::string>& hosts,
                   int lateTask = -1, int lateSeconds = 0, const std::string& fakeCli = {}) {
    const auto bin = dir / "bin";
    std::filesystem::create_directories(bin);
    std::string scontrol = "#!/bin/bash\n";
    for (const std::string& h : hosts) scontrol += "echo " + h + "\n";
    writeExecutable(bin / "scontrol", scontrol);
    writeExecutable(bin / "srun",
                    "#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\npids=()\n"
                    "for ((i = 0; i < " + std::to_string(hosts.size()) + "; i++)); do\n"
                    "  if ((i == " + std::to_string(lateTask) + ")); then (sleep " + std::to_string(lateSeconds) +
                    "; SLURM_PROCID=$i exec \"$@\") & else SLURM_PROCID=$i \"$@\" & fi; pids+=($!)\n"
                    "done\n"
                    "rc=0; for p in \"${pids[@]}\"; do wait $p || rc=1; done; exit $rc\n");
    if (fakeCli.empty()) std::filesystem::create_symlink(TRAINBENCH_CLI_PATH, bin / "trainbench-cli");
    else writeExecutable(bin / "trainbench-cli", fakeCli);
    const std::string command = "cd " + dir.string() + " && PATH=" + bin.string() + ":$PATH SLURM_JOB_NODELIST=node[1-" +
                                std::to_string(hosts.size()) + "] bash " + script + " > slurm.out 2>&1";
    return std::system(command.c_str());
}

// The Slurm script of a parameter_server job (a chief, two workers, one ps) whose tasks listen on `port`.
trainbench::testing::CliResult writeParameterServerScript(const std::filesystem::path& dir, const std::string& script,
                                                          const std::string& db, int port) {
    return runCli({"launch-script", launchExperiment(dir), "--slurm", "--db", db, "--port", std::to_string(port), "-o", script,
                   "--set", "strategy.type=parameter_server"},
                  dir);
}

}  // namespace

TEST(CliLaunchScript, TheSlurmScriptRunsTheJob) {
    TempDir tmp;
    const std::string script = (tmp.path / "job.sbatch").string();
    const std::string db = (tmp.path / "runs.db").string();
    auto gen = runCli({"launch-script", launchExperiment(tmp.path), "--slurm", "--db", db, "--port", "0", "-o", script},
                      tmp.path);
    // Port 0 is refused: every task needs a known port.
    EXPECT_EQ(gen.exitCode, 2) << gen.err;
    gen = runCli({"launch-script", launchExperiment(tmp.path), "--slurm", "--db", db, "--port", "29517", "-o", script}, tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_NE(gen.err.find("Slurm batch script, 2 task(s)"), std::string::npos) << gen.err;

    // Two nodes under two loopback names.
    const int rc = runSlurmScript(tmp.path, script, {"127.0.0.1", "localhost"});
    EXPECT_EQ(rc, 0) << trainbench::testing::readAll(tmp.path / "slurm.out");

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u) << "the chief records the job once";
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Completed);
    EXPECT_EQ(runs[0].strategy, "multi_worker");
    EXPECT_EQ(runs[0].replicas, 2);
    EXPECT_EQ(runs[0].steps, 20);
    EXPECT_EQ(store.replicaSteps(runs[0].id).size(), 40u);
}

// strategy.collective "mpi": the script has srun start the ranks through PMIx and builds no
// TF_CONFIG and no token. Its srun line runs for real, with mpirun standing in for srun's PMIx
// launch on this machine; a Kubeflow TFJob is refused (its pods have no MPI launcher).
TEST(CliLaunchScript, TheSlurmScriptOfAnMpiJobRunsItUnderAnMpiLauncher) {
    trainbench::testing::prepareMpiUnderSanitizers();
    TempDir tmp;
    const std::string script = (tmp.path / "job.sbatch").string();
    const std::string db = (tmp.path / "runs.db").string();
    auto gen = runCli({"launch-script", launchExperiment(tmp.path), "--slurm", "--db", db, "-o", script, "--set",
                       "strategy.collective=mpi"},
                      tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const std::string text = trainbench::testing::readAll(script);
    EXPECT_NE(text.find("srun --mpi=pmix --kill-on-bad-exit=1 trainbench-cli 'worker'"), std::string::npos) << text;
    EXPECT_EQ(text.find("TF_CONFIG"), std::string::npos) << text;
    EXPECT_EQ(text.find("TRAINBENCH_JOB_TOKEN"), std::string::npos) << text;
    EXPECT_NE(text.find("#SBATCH --nodes=2"), std::string::npos) << text;

    const auto bin = tmp.path / "bin";
    std::filesystem::create_directories(bin);
    writeExecutable(bin / "srun", std::string("#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\n") +
                                      "exec mpirun -np 2 --oversubscribe --bind-to none" +
                                      (::geteuid() == 0 ? " --allow-run-as-root" : "") + " \"$@\"\n");
    std::filesystem::create_symlink(TRAINBENCH_CLI_PATH, bin / "trainbench-cli");
    const std::string command = "cd " + tmp.path.string() + " && PATH=" + bin.string() + ":$PATH bash " + script +
                                " > slurm.out 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << trainbench::testing::readAll(tmp.path / "slurm.out");
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u) << "rank 0 records the job once";
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Completed);
    EXPECT_EQ(runs[0].replicas, 2);
    EXPECT_EQ(runs[0].steps, 20);
    EXPECT_EQ(store.replicaSteps(runs[0].id).size(), 40u);

    auto kubeflow = runCli({"launch-script", launchExperiment(tmp.path), "--kubeflow", "--set", "strategy.collective=mpi"},
                           tmp.path);
    EXPECT_EQ(kubeflow.exitCode, 2);
    EXPECT_NE(kubeflow.err.find("has strategy.collective 'mpi'; a Kubeflow TFJob starts its pods without an MPI launcher"),
              std::string::npos)
        << kubeflow.err;
}

// A chief, two workers and a parameter server: four "nodes", here four loopback addresses (the
// tasks all listen on the script's one port, as on a cluster).
TEST(CliLaunchScript, TheSlurmScriptRunsAParameterServerJob) {
    TempDir tmp;
    const std::string script = (tmp.path / "ps.sbatch").string();
    const std::string db = (tmp.path / "runs.db").string();
    const auto gen = writeParameterServerScript(tmp.path, script, db, 29519);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_NE(gen.err.find("Slurm batch script, 4 task(s)"), std::string::npos) << gen.err;
    const int rc = runSlurmScript(tmp.path, script, {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"});
    EXPECT_EQ(rc, 0) << trainbench::testing::readAll(tmp.path / "slurm.out");

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u) << "the chief records the job once";
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Completed);
    EXPECT_EQ(runs[0].strategy, "parameter_server");
    EXPECT_EQ(runs[0].replicas, 2);
    EXPECT_EQ(runs[0].steps, 40) << "1280 examples in steps of 32 (each worker's half of the batch)";
    EXPECT_EQ(store.psUpdates(runs[0].id).size(), 40u);
}

// Tasks of a cluster start when their node gets to them. A worker that starts seconds after the
// others (SLURM_PROCID 1 is worker 0) still takes part: the coordinator waits for every worker of the
// cluster spec before the first step, where the other worker would otherwise have trained this short
// job alone and the late one found the coordinator gone and failed the job.
TEST(CliLaunchScript, AWorkerThatStartsLateStillTakesPart) {
    TempDir tmp;
    const std::string script = (tmp.path / "ps.sbatch").string();
    const std::string db = (tmp.path / "runs.db").string();
    const auto gen = writeParameterServerScript(tmp.path, script, db, 29521);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const int rc = runSlurmScript(tmp.path, script, {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"},
                                  /*lateTask=*/1, /*lateSeconds=*/3);
    const std::string out = trainbench::testing::readAll(tmp.path / "slurm.out");
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("coordinator: worker 0 joined"), std::string::npos) << out;

    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, profiler::RunStatus::Completed);
    std::map<int, int> byWorker;
    for (const auto& u : store.psUpdates(runs[0].id)) ++byWorker[u.update.worker];
    EXPECT_GT(byWorker[0], 0) << "the late worker trained too";
    EXPECT_GT(byWorker[1], 0);
}

TEST(CliLaunchScript, TheKubeflowManifestIsATfJobWithATokenSecret) {
    TempDir tmp;
    auto gen = runCli({"launch-script", launchExperiment(tmp.path), "--kubeflow", "--workers", "4", "--image", "registry/tb:1",
                       "--set", "train.epochs=3"},
                      tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const std::string& y = gen.out;
    for (const char* line : {"kind: Secret\n", "  name: \"slurm-job-token\"\n", "kind: TFJob\n", "  name: \"slurm-job\"\n",
                             "    Chief:\n      replicas: 1\n", "    Worker:\n      replicas: 3\n",
                             "              image: \"registry/tb:1\"\n", "containerPort: 2222\n",
                             "secretKeyRef: {name: \"slurm-job-token\", key: \"token\"}", "\"--set=train.epochs=3\", \"--\", ",
                             "requests: {cpu: \"1\"}"})
        EXPECT_NE(y.find(line), std::string::npos) << line << "\n" << y;
    EXPECT_EQ(y.find('\t'), std::string::npos) << "YAML has no tabs";
    // A fresh token every time.
    auto again = runCli({"launch-script", launchExperiment(tmp.path), "--kubeflow"}, tmp.path);
    auto token = [](const std::string& s) { return s.substr(s.find("token: \""), 44); };
    EXPECT_NE(token(again.out), token(y));

    auto ps = runCli({"launch-script", launchExperiment(tmp.path), "--kubeflow", "--set", "strategy.type=parameter_server",
                      "--set", "strategy.parameter_servers=2"},
                     tmp.path);
    ASSERT_EQ(ps.exitCode, 0) << ps.err;
    for (const char* line : {"    Chief:\n      replicas: 1\n", "    Worker:\n      replicas: 2\n", "    PS:\n      replicas: 2\n"})
        EXPECT_NE(ps.out.find(line), std::string::npos) << line << "\n" << ps.out;

    auto wrong = runCli({"launch-script", launchExperiment(tmp.path), "--kubeflow", "--set", "strategy.type=mirrored"}, tmp.path);
    EXPECT_EQ(wrong.exitCode, 2);
    EXPECT_NE(wrong.err.find("needs 'multi_worker'"), std::string::npos) << wrong.err;
    auto neither = runCli({"launch-script", launchExperiment(tmp.path)}, tmp.path);
    EXPECT_EQ(neither.exitCode, 2);
    EXPECT_NE(neither.err.find("--slurm, --kubeflow or --serve"), std::string::npos) << neither.err;
}

// ---- Hostile strings (issue 19): an experiment's name, paths, overrides and the image reach the
// generated files as data, never as script or YAML; a real bash and a real YAML parser judge.

namespace {

using nlohmann::json;

// An experiment file at a path that is itself hostile, with a hostile name.
std::filesystem::path hostileExperiment(const std::filesystem::path& dir, const std::string& name) {
    const auto folder = dir / "in 'q' \"dq\" $(touch pwned) `touch pwned` $HOME *\n?";
    std::filesystem::create_directories(folder);
    const auto path = folder / "-job; touch pwned.json";
    std::ofstream(path) << json{{"name", name},
                                {"data", {{"train_limit", 1280}, {"test_limit", 200}}},
                                {"model", {{"preset", "logreg"}}},
                                {"train", {{"batch_size", 64}, {"epochs", 1}}},
                                {"strategy", {{"type", "multi_worker"}, {"replicas", 2}, {"threads_per_replica", 1},
                                              {"timeout_s", 20}}}}
                               .dump();
    return path;
}

const std::string kEvilName = "evil\nrm -rf ~\n";
const std::string kEvilOverride = "name=o'v\"er $(touch pwned) `touch pwned`\n#x\n* ~ \\";
const std::string kEvilDbName = "runs '$(touch pwned)'\n\".db";

// Files named "pwned" anywhere under dir: a smuggled command ran.
bool somethingRan(const std::filesystem::path& dir) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.path().filename() == "pwned") return true;
    return false;
}

bool isRfc1035Label(const std::string& s) {
    if (s.empty() || s.size() > 50 || s.front() < 'a' || s.front() > 'z' || s.back() == '-') return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    return true;
}

std::vector<std::string> keysOf(const json& object) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : object.items()) keys.push_back(k);
    return keys;
}

}  // namespace

TEST(CliLaunchScript, AHostileNameStaysInsideItsCommentLine) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, kEvilName);
    const auto gen = runCli({"launch-script", file.string(), "--slurm"}, tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    std::istringstream lines(gen.out);
    for (std::string line; std::getline(lines, line);) {
        EXPECT_NE(line, "rm -rf ~") << "the name broke out of its comment:\n" << gen.out;
        EXPECT_NE(line, "': 1 chief + 1 worker(s), one task per node.") << gen.out;
    }
    EXPECT_NE(gen.out.find("# trainbench multi_worker job \"evil\\nrm -rf ~\\n\": 1 chief + 1 worker(s)"),
              std::string::npos)
        << gen.out;
    EXPECT_NE(gen.out.find("\n#SBATCH --job-name=evil-rm--rf\n"), std::string::npos) << gen.out;
    const auto syntax = trainbench::testing::runProgram({"bash", "-n"}, gen.out);
    EXPECT_EQ(syntax.exitCode, 0) << syntax.err;
}

// The script runs under stand-ins for Slurm, with a stand-in trainbench-cli that records the
// arguments it got: they are the path, store and overrides given, byte for byte, and nothing ran.
TEST(CliLaunchScript, TheSlurmScriptHandsHostileArgumentsOverUnchanged) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, kEvilName);
    const std::string db = (tmp.path / kEvilDbName).string();
    const std::string script = (tmp.path / "job.sbatch").string();
    const auto gen = runCli({"launch-script", file.string(), "--slurm", "--db", db, "--set", kEvilOverride, "--set",
                             "train.epochs=1", "-o", script},
                            tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const std::string text = trainbench::testing::readAll(script);
    const auto syntax = trainbench::testing::runProgram({"bash", "-n", script});
    EXPECT_EQ(syntax.exitCode, 0) << syntax.err;

    const std::string recorder = "#!/bin/bash\nprintf '%s\\0' \"$@\" > " + (tmp.path / "args.").string() +
                                 "\"$SLURM_PROCID\"\n";
    const int rc = runSlurmScript(tmp.path, script, {"127.0.0.1", "localhost"}, -1, 0, recorder);
    ASSERT_EQ(rc, 0) << trainbench::testing::readAll(tmp.path / "slurm.out") << "\n" << text;
    std::string expected;
    for (const std::string& arg :
         {std::string("worker"), "--db=" + db, "--set=" + kEvilOverride, std::string("--set=train.epochs=1"),
          std::string("--"), file.string()})
        expected += arg + '\0';
    for (const char* task : {"args.0", "args.1"})
        EXPECT_EQ(trainbench::testing::readAll(tmp.path / task), expected) << task << "\n" << text;
    EXPECT_FALSE(somethingRan(tmp.path)) << text;
}

// The same hostile name, paths and override in an MPI job's script (srun --mpi=pmix, no TF_CONFIG):
// each reaches trainbench-cli as one argument, unchanged, and nothing else runs.
TEST(CliLaunchScript, TheMpiSlurmScriptHandsHostileArgumentsOverUnchanged) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, kEvilName);
    const std::string db = (tmp.path / kEvilDbName).string();
    const std::string script = (tmp.path / "job.sbatch").string();
    const auto gen = runCli({"launch-script", file.string(), "--slurm", "--db", db, "--set", kEvilOverride, "--set",
                             "strategy.collective=mpi", "-o", script},
                            tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const std::string text = trainbench::testing::readAll(script);
    const auto syntax = trainbench::testing::runProgram({"bash", "-n", script});
    EXPECT_EQ(syntax.exitCode, 0) << syntax.err;
    const std::string recorder = "#!/bin/bash\nprintf '%s\\0' \"$@\" > " + (tmp.path / "args.").string() +
                                 "\"$SLURM_PROCID\"\n";
    const int rc = runSlurmScript(tmp.path, script, {"127.0.0.1", "localhost"}, -1, 0, recorder);
    ASSERT_EQ(rc, 0) << trainbench::testing::readAll(tmp.path / "slurm.out") << "\n" << text;
    std::string expected;
    for (const std::string& arg : {std::string("worker"), "--db=" + db, "--set=" + kEvilOverride,
                                   std::string("--set=strategy.collective=mpi"), std::string("--"), file.string()})
        expected += arg + '\0';
    for (const char* task : {"args.0", "args.1"})
        EXPECT_EQ(trainbench::testing::readAll(tmp.path / task), expected) << task << "\n" << text;
    EXPECT_FALSE(somethingRan(tmp.path)) << text;
}

TEST(CliLaunchScript, TheKubeflowManifestKeepsHostileStringsAsData) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, kEvilName + "\"}\n---\nkind: Pod\n");
    const std::string image = "registry/tb:1\n              command: [\"sh\", \"-c\", \"rm -rf /\"]\n# \xe2\x80\xa8x: y\xc2\x85";
    const std::string db = "/data/" + kEvilDbName;
    const auto gen = runCli({"launch-script", file.string(), "--kubeflow", "--image", image, "--db", db, "--set",
                             kEvilOverride, "--set", "strategy.type=parameter_server"},
                            tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const auto parsed = trainbench::testing::yamlDocumentsAsJson(gen.out);
    ASSERT_EQ(parsed.exitCode, 0) << "not YAML (is python3-yaml installed? scripts/install-deps.sh installs it):\n"
                                  << parsed.err << "\n" << gen.out;
    const json docs = json::parse(parsed.out);
    ASSERT_EQ(docs.size(), 2u) << "the Secret and the TFJob, no document more:\n" << gen.out;
    const json& secret = docs[0];
    const json& tfjob = docs[1];
    EXPECT_EQ(keysOf(secret), (std::vector<std::string>{"apiVersion", "kind", "metadata", "stringData"})) << gen.out;
    EXPECT_EQ(keysOf(secret["stringData"]), std::vector<std::string>{"token"});
    EXPECT_EQ(secret["kind"], "Secret");
    EXPECT_EQ(keysOf(tfjob), (std::vector<std::string>{"apiVersion", "kind", "metadata", "spec"})) << gen.out;
    EXPECT_EQ(tfjob["kind"], "TFJob");
    const std::string name = tfjob["metadata"]["name"].get<std::string>();
    const std::string secretName = secret["metadata"]["name"].get<std::string>();
    EXPECT_TRUE(isRfc1035Label(name)) << name;
    EXPECT_TRUE(isRfc1035Label(secretName)) << secretName;
    EXPECT_EQ(secretName, name + "-token");

    const json command = json::array({"trainbench-cli", "worker", "--db=" + db, "--set=" + kEvilOverride,
                                      "--set=strategy.type=parameter_server", "--", file.string()});
    EXPECT_EQ(keysOf(tfjob["spec"]["tfReplicaSpecs"]), (std::vector<std::string>{"Chief", "PS", "Worker"}));
    for (const auto& [role, spec] : tfjob["spec"]["tfReplicaSpecs"].items()) {
        const json& containers = spec["template"]["spec"]["containers"];
        ASSERT_EQ(containers.size(), 1u) << role;
        const json& c = containers[0];
        EXPECT_EQ(keysOf(c), (std::vector<std::string>{"command", "env", "image", "name", "ports", "resources"})) << role;
        EXPECT_EQ(c["image"].get<std::string>(), image) << role;
        EXPECT_EQ(c["command"], command) << role;
        EXPECT_EQ(c["env"][0]["valueFrom"]["secretKeyRef"]["name"], secretName) << role;
    }
}

TEST(CliLaunchScript, AnImageThatIsNotTextIsRefusedAndNothingIsWritten) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, "plain");
    const auto out = tmp.path / "job.yaml";
    const auto gen = runCli({"launch-script", file.string(), "--kubeflow", "--image", "tb\xff:1", "-o", out.string()},
                            tmp.path);
    EXPECT_EQ(gen.exitCode, 2) << gen.err;
    EXPECT_EQ(gen.err, "launch-script: --image is not valid UTF-8 (at byte 2), which a YAML manifest cannot hold\n");
    EXPECT_FALSE(std::filesystem::exists(out));
}

// The manifest holds the job's token: 0600, also when it replaces a file that was 0644.
TEST(CliLaunchScript, TheManifestFileIsForTheUsersEyesOnly) {
    TempDir tmp;
    const auto file = hostileExperiment(tmp.path, "job");
    const auto out = tmp.path / "job.yaml";
    const mode_t oldMask = ::umask(022);
    for (bool existed : {false, true}) {
        if (existed) {
            std::ofstream(out) << "an older manifest";
            ::chmod(out.c_str(), 0644);
        }
        const auto gen = runCli({"launch-script", file.string(), "--kubeflow", "-o", out.string()}, tmp.path);
        ASSERT_EQ(gen.exitCode, 0) << gen.err;
        struct stat st {};
        ASSERT_EQ(::stat(out.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0600u) << (existed ? "replacing a 0644 file" : "a new file");
        EXPECT_NE(trainbench::testing::readAll(out).find("kind: TFJob"), std::string::npos);
    }
    // A Slurm script holds no secret (the token is made when the job starts): a plain file.
    const auto script = tmp.path / "job.sbatch";
    ASSERT_EQ(runCli({"launch-script", file.string(), "--slurm", "-o", script.string()}, tmp.path).exitCode, 0);
    struct stat st {};
    ASSERT_EQ(::stat(script.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    ::umask(oldMask);
}

TEST(CliLaunchScript, TheServeManifestIsADeploymentAndAServiceThatKeepHostileStringsAsData) {
    TempDir tmp;
    const std::string model = "/models/" + kEvilName + ".onnx";
    const std::string image = "registry/tb:1\n          command: [\"sh\"]";
    const std::string extra = "--max-batch-size=32\"]\n---\nkind: Pod";
    const auto gen = runCli({"launch-script", model, "--serve", "--replicas", "3", "--image", image, "--model-name",
                             "fmnist", "--model-claim", "models-pvc", "--serve-arg", extra, "--port", "8501"},
                            tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const auto parsed = trainbench::testing::yamlDocumentsAsJson(gen.out);
    ASSERT_EQ(parsed.exitCode, 0) << parsed.err << "\n" << gen.out;
    const json docs = json::parse(parsed.out);
    ASSERT_EQ(docs.size(), 3u) << "the token's Secret, the Deployment and the Service, no document more:\n" << gen.out;
    const json& secret = docs[0];
    const json& deployment = docs[1];
    const json& service = docs[2];
    EXPECT_EQ(secret["kind"], "Secret");
    const std::string token = secret["stringData"]["token"].get<std::string>();
    EXPECT_EQ(token.size(), 32u) << "128 random bits in hex";
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
    EXPECT_EQ(deployment["kind"], "Deployment");
    EXPECT_EQ(deployment["spec"]["replicas"], 3);
    EXPECT_TRUE(isRfc1035Label(deployment["metadata"]["name"].get<std::string>()));
    const json& c = deployment["spec"]["template"]["spec"]["containers"][0];
    EXPECT_EQ(c["image"].get<std::string>(), image);
    EXPECT_EQ(c["command"], json::array({"trainbench-cli"}));
    EXPECT_EQ(c["args"], json::array({"serve", "--bind=0.0.0.0", "--port=8501", "--model-name=fmnist",
                                      "--auth-token-file=/var/run/trainbench/serve-token/token", extra, "--", model}));
    // A probe cannot present the token: it connects only.
    EXPECT_EQ(c["readinessProbe"]["tcpSocket"]["port"], 8501);
    EXPECT_EQ(c["livenessProbe"]["tcpSocket"]["port"], 8501);
    EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/models");
    EXPECT_EQ(c["volumeMounts"][1]["mountPath"], "/var/run/trainbench/serve-token");
    const json& volumes = deployment["spec"]["template"]["spec"]["volumes"];
    EXPECT_EQ(volumes[0]["persistentVolumeClaim"]["claimName"], "models-pvc");
    EXPECT_EQ(volumes[1]["name"], c["volumeMounts"][1]["name"]);
    EXPECT_EQ(volumes[1]["secret"]["secretName"], secret["metadata"]["name"]);
    EXPECT_EQ(deployment["spec"]["selector"]["matchLabels"], deployment["spec"]["template"]["metadata"]["labels"]);
    EXPECT_EQ(service["kind"], "Service");
    EXPECT_EQ(service["spec"]["type"], "ClusterIP");
    EXPECT_EQ(service["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]);
    EXPECT_EQ(service["spec"]["ports"][0]["targetPort"], 8501);
}

TEST(CliLaunchScript, TheServeManifestWithoutAuthHasNoSecretAndSaysSo) {
    TempDir tmp;
    const auto out = tmp.path / "serve.yaml";
    const auto gen = runCli({"launch-script", "/models/w1.onnx", "--serve", "--no-auth", "--port", "8501", "-o", out.string()},
                            tmp.path);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_NE(gen.err.find("no token: --no-auth"), std::string::npos) << gen.err;
    const std::string text = trainbench::testing::readAll(out);
    EXPECT_NE(text.find("--no-auth: the server answers anyone who reaches it"), std::string::npos) << text;
    const auto parsed = trainbench::testing::yamlDocumentsAsJson(text);
    ASSERT_EQ(parsed.exitCode, 0) << parsed.err << "\n" << text;
    const json docs = json::parse(parsed.out);
    ASSERT_EQ(docs.size(), 2u) << text;
    const json& c = docs[0]["spec"]["template"]["spec"]["containers"][0];
    EXPECT_EQ(c["args"], json::array({"serve", "--bind=0.0.0.0", "--port=8501", "--model-name=w1", "--", "/models/w1.onnx"}));
    EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/v1/models/w1");
    EXPECT_FALSE(c.contains("volumeMounts"));
    // With a token the manifest holds a secret: only its owner may read it.
    const auto withToken = tmp.path / "serve-token.yaml";
    ASSERT_EQ(runCli({"launch-script", "/models/w1.onnx", "--serve", "-o", withToken.string()}, tmp.path).exitCode, 0);
    struct stat st {};
    ASSERT_EQ(::stat(withToken.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}
