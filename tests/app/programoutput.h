#pragma once
// Runs a real program (bash, python3) for tests that let it judge what trainbench generated: its
// stdin from a string, its stdout and stderr captured byte for byte (through files, so neither can
// fill a pipe and stall it), killed after a deadline.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace trainbench::testing {

struct ProgramOutput {
    int exitCode = -1;  // 128 + signal when killed; -1 when it could not start
    std::string out, err;
};

inline std::string readFileBytes(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// argv[0] is looked up on PATH.
inline ProgramOutput runProgram(const std::vector<std::string>& argv, const std::string& input = {},
                                std::chrono::seconds deadline = std::chrono::seconds(60)) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("trainbench-program-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(std::rand()));
    fs::create_directories(dir);
    const fs::path in = dir / "in", out = dir / "out", err = dir / "err";
    std::ofstream(in, std::ios::binary) << input;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_t pid = -1;
    ProgramOutput r;
    const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == 0) {
        int status = 0;
        const auto until = std::chrono::steady_clock::now() + deadline;
        while (::waitpid(pid, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > until) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.out = readFileBytes(out);
        r.err = readFileBytes(err);
    } else {
        r.err = "cannot start " + argv[0];
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    return r;
}

// A YAML stream read by a real YAML parser (PyYAML's safe loader, YAML 1.1, the strictest of the
// common ones about characters), every document of it, as JSON text: "[doc1, doc2, ...]". PyYAML
// comes with python3-yaml, which scripts/install-deps.sh installs.
inline ProgramOutput yamlDocumentsAsJson(const std::string& yaml) {
    return runProgram({"python3", "-c",
                       "import json, sys, yaml\n"
                       "docs = list(yaml.safe_load_all(sys.stdin.buffer))\n"
                       "json.dump(docs, sys.stdout)\n"},
                      yaml);
}

}  // namespace trainbench::testing
