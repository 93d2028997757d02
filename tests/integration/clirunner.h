#pragma once
// Runs trainbench-cli as a child process for end-to-end tests: real process, real store file.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace trainbench::testing {

struct CliResult {
    int exitCode = -1;  // or 128 + signal
    std::string out, err;
};

inline std::string readAll(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

class CliProcess {
public:
    explicit CliProcess(std::vector<std::string> args, const std::filesystem::path& dir) : dir_(dir) {
        outPath_ = dir / ("out-" + std::to_string(counter()++) + ".txt");
        errPath_ = outPath_;
        errPath_.replace_extension(".err");
        pid_ = fork();
        if (pid_ == 0) {
            int o = open(outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int e = open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(o, 1);
            dup2(e, 2);
            int in = open("/dev/null", O_RDONLY);
            dup2(in, 0);
            std::vector<char*> argv;
            std::string cli = TRAINBENCH_CLI_PATH;
            argv.push_back(cli.data());
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(cli.c_str(), argv.data());
            _exit(127);
        }
    }
    void signal(int sig) { kill(pid_, sig); }
    CliResult wait() {
        int status = 0;
        waitpid(pid_, &status, 0);
        CliResult r;
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.out = readAll(outPath_);
        r.err = readAll(errPath_);
        return r;
    }
    std::string currentErr() const { return readAll(errPath_); }

private:
    static int& counter() { static int c = 0; return c; }
    std::filesystem::path dir_, outPath_, errPath_;
    pid_t pid_ = -1;
};

inline CliResult runCli(std::vector<std::string> args, const std::filesystem::path& dir) {
    return CliProcess(std::move(args), dir).wait();
}

// A fresh temporary folder per test, removed afterwards.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        path = std::filesystem::temp_directory_path() /
               ("trainbench-it-" + std::to_string(getpid()) + "-" + std::to_string(std::rand()));
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace trainbench::testing
