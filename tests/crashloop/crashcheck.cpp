// The crash loop's tool (scripts/crash-loop.sh):
//
//   test_crashcheck kill PID --db DB --checkpoint FILE [--aim anything|store-commit|checkpoint]
//       stops the run process PID, notes what it is doing, kills it with SIGKILL and prints that
//       (killprobe.h): "exited", "-", "checkpoint", "store-commit", ...; with --aim, first waits
//       for a moment inside a store commit or a checkpoint write
//   test_crashcheck check --db DB --checkpoint FILE --every N --state FILE
//                         [--killed PID --probe WORD --log FILE]
//       checks the store (storecheck.h) and the checkpoint (checkpointcheck.h) after a run ended or
//       was killed, against what the last check saw (the state file, updated), and names the phase
//       the kill hit. Prints "key: value" facts and one "VIOLATION: ..." line per violation; exits
//       1 when there is any, 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/crashloop/checkpointcheck.h"
#include "tests/crashloop/killprobe.h"
#include "tests/crashloop/storecheck.h"

using namespace trainbench::crashloop;

namespace {

int usage(const std::string& why) {
    std::fprintf(stderr,
                 "test_crashcheck: %s\nusage: test_crashcheck kill PID --db DB --checkpoint FILE [--aim anything|store-commit|checkpoint]\n"
                 "       test_crashcheck check --db DB --checkpoint FILE --every N --state FILE "
                 "[--killed PID --probe WORD --log FILE]\n",
                 why.c_str());
    return 2;
}

// Whether a probe text ("checkpoint+store-commit") holds the word.
bool saw(const std::string& probe, const std::string& word) {
    return ("+" + probe + "+").find("+" + word + "+") != std::string::npos;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Where the kill hit, from the probe, the run's log (stderr: "training '...' -> db" before the
// store is opened, "data: ..." once the data is loaded, "model: ..." once the model is built), the
// store (its row, and whether its final status was in before the kill) and a temporary checkpoint
// file it left.
std::string phaseOf(int64_t pid, const std::string& probe, const std::string& log, const StoreFacts& store,
                    const Leftovers& left) {
    if (probe == "exited") return "none (exited before the kill)";
    const std::string out = readFile(log);
    int found = -1;
    for (size_t i = 0; i < store.newRuns.size(); ++i)
        if (store.newRuns[i].pid == pid) found = static_cast<int>(i);
    if (found < 0) return out.find("training '") == std::string::npos ? "startup" : "store open";
    if (store.rawStatusBefore[static_cast<size_t>(found)] != "running") return "finishing";
    bool leftTemp = false;
    for (int64_t p : left.pids) leftTemp = leftTemp || p == pid;
    if (saw(probe, "checkpoint") || leftTemp) return "checkpoint write";
    if (saw(probe, "store-commit")) return "store commit";
    if (saw(probe, "store-wal-checkpoint")) return "store wal checkpoint";
    if (out.find("\ndata: ") == std::string::npos) return "data loading";
    if (out.find("\nmodel: ") == std::string::npos) return "model setup";
    return "training";
}

int check(std::map<std::string, std::string>& a) {
    for (const char* key : {"--db", "--checkpoint", "--every", "--state"})
        if (!a.count(key)) return usage(std::string("check needs ") + key);
    const CrashState before = CrashState::load(a["--state"]);
    CrashState after;
    after.lastRun = before.lastRun;
    CrashReport report;
    const StoreFacts store = checkStore(a["--db"], before, after, report);
    checkCheckpoint({a["--checkpoint"], std::stoll(a["--every"])}, store.newRuns, store.plannedSteps, before, after,
                    report);
    const Leftovers left = checkFolders(a["--db"], a["--checkpoint"], report);
    report.fact("leftover_temp_files", std::to_string(left.pids.size()) + " (" + std::to_string(left.bytes) + " bytes)");
    if (a.count("--killed"))
        report.fact("phase", phaseOf(std::stoll(a["--killed"]), a["--probe"], a["--log"], store, left));
    for (size_t i = 0; i < store.newRuns.size(); ++i)
        report.fact("new_run", std::to_string(store.newRuns[i].id.value) + " " + store.rawStatusBefore[i] + " -> " +
                                   std::string(trainbench::profiler::runStatusName(store.newRuns[i].status)) + ", " +
                                   std::to_string(after.runs[store.newRuns[i].id.value].steps) + " steps");
    after.save(a["--state"]);
    for (const auto& [key, value] : report.facts) std::printf("%s: %s\n", key.c_str(), value.c_str());
    for (const std::string& v : report.violations) std::printf("VIOLATION: %s\n", v.c_str());
    return report.violations.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage("say kill or check");
    const std::string command = argv[1];
    std::map<std::string, std::string> a;
    std::string pid;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) == 0 && i + 1 < argc) a[arg] = argv[++i];
        else if (pid.empty()) pid = arg;
        else return usage("unexpected argument " + arg);
    }
    try {
        if (command == "kill") {
            if (pid.empty() || !a.count("--db") || !a.count("--checkpoint")) return usage("kill needs PID, --db, --checkpoint");
            const std::string aim = a.count("--aim") ? a["--aim"] : "anything";
            if (aim != "anything" && aim != "store-commit" && aim != "checkpoint") return usage("unknown --aim " + aim);
            const KillProbe probe = stopProbeAndKill(static_cast<pid_t>(std::stol(pid)), a["--db"], a["--checkpoint"],
                                                     aim == "store-commit" ? Aim::StoreCommit
                                                     : aim == "checkpoint" ? Aim::CheckpointWrite
                                                                           : Aim::Anything);
            std::printf("%s\n", probe.text().c_str());
            return 0;
        }
        if (command == "check") return check(a);
    } catch (const std::exception& e) {
        std::printf("VIOLATION: the check itself failed: %s\n", e.what());
        return 1;
    }
    return usage("unknown command " + command);
}
