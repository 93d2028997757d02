#pragma once
// Child processes for tests that need real processes (ranks of a multi-worker group). posix_spawn
// of a fresh executable: nothing of the test process (its threads, OpenMP's pool) is inherited,
// which fork() alone would not guarantee. stdout and stderr go to files next to `outPrefix`.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace trainbench::engine::test {

struct ChildResult {
    int exitCode = -1;  // -1 if it ended by a signal
    int signal = 0;
    bool timedOut = false;  // wait() gave up and killed it
};

class ChildProcess {
public:
    ChildProcess(const std::string& exe, const std::vector<std::string>& args, const std::filesystem::path& outPrefix)
        : outPath_(outPrefix.string() + ".out"), errPath_(outPrefix.string() + ".err") {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        std::vector<std::string> all{exe};
        all.insert(all.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) throw std::runtime_error("cannot start " + exe + ": " + std::strerror(rc));
    }
    ~ChildProcess() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    void kill(int sig) { ::kill(pid_, sig); }
    bool running() {
        if (reaped_) return false;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
        record(status);
        return false;
    }
    // Waits up to `limit` for the process to end; past it, kills it and says so.
    ChildResult wait(std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (running()) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                int status = 0;
                waitpid(pid_, &status, 0);
                record(status);
                result_.timedOut = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return result_;
    }
    std::string out() const { return slurp(outPath_); }
    std::string err() const { return slurp(errPath_); }

private:
    static std::string slurp(const std::string& p) {
        std::ifstream f(p);
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
    }
    void record(int status) {
        reaped_ = true;
        if (WIFEXITED(status)) result_.exitCode = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
    }
    std::string outPath_, errPath_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    ChildResult result_;
};

}  // namespace trainbench::engine::test
