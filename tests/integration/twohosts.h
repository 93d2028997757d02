#pragma once
// Two "hosts" on this machine for multi-host tests: two network namespaces joined by a veth pair,
// 10.199.N.1 in the first and 10.199.N.2 in the second, each with its loopback up. Making them
// needs root and iproute2 (and a kernel or container that allows namespaces and veth);
// TwoHosts::create() says which command failed and what it printed when it cannot.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace trainbench::testing {

struct CommandResult {
    int exitCode = -1;   // 127: could not be started; 128 + signal
    std::string output;  // stdout and stderr together
};

// Runs a command (found on PATH) to its end.
inline CommandResult runCommand(const std::vector<std::string>& command) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return {127, std::string("pipe2() failed: ") + std::strerror(errno)};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execvp(argv[0], argv.data());
        dprintf(2, "cannot run %s: %s", argv[0], std::strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    CommandResult r;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    while (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
    return r;
}

struct NetnsHost {
    std::string ns;       // the network namespace's name
    std::string address;  // its IPv4 address on the link to the other host
    // The command prefix that runs a program on this host.
    std::vector<std::string> exec() const { return {"ip", "netns", "exec", ns}; }
};

class TwoHosts {
public:
    // The two hosts, or null with `whyNot` naming the command that failed and its output.
    static std::unique_ptr<TwoHosts> create(std::string* whyNot) {
        std::unique_ptr<TwoHosts> h(new TwoHosts);
        // Names unique to this process; the link lies wholly inside the two namespaces (no end in
        // this one), so its subnet cannot clash with this machine's routes.
        const std::string id = std::to_string(getpid());
        const std::string subnet = "10.199." + std::to_string(getpid() % 250 + 1) + ".";
        h->a_ = {"tb-" + id + "-a", subnet + "1"};
        h->b_ = {"tb-" + id + "-b", subnet + "2"};
        const std::vector<std::vector<std::string>> steps = {
            {"ip", "netns", "add", h->a_.ns},
            {"ip", "netns", "add", h->b_.ns},
            {"ip", "-n", h->a_.ns, "link", "add", "tb0", "type", "veth", "peer", "name", "tb1", "netns", h->b_.ns},
            {"ip", "-n", h->a_.ns, "addr", "add", h->a_.address + "/24", "dev", "tb0"},
            {"ip", "-n", h->b_.ns, "addr", "add", h->b_.address + "/24", "dev", "tb1"},
            {"ip", "-n", h->a_.ns, "link", "set", "lo", "up"},
            {"ip", "-n", h->b_.ns, "link", "set", "lo", "up"},
            {"ip", "-n", h->a_.ns, "link", "set", "tb0", "up"},
            {"ip", "-n", h->b_.ns, "link", "set", "tb1", "up"},
            {"ip", "netns", "exec", h->a_.ns, "true"},  // exec remounts /sys, which a container may forbid
        };
        // A namespace left by an earlier process with this pid that was killed before cleaning up.
        for (const NetnsHost* host : {&h->a_, &h->b_}) runCommand({"ip", "netns", "del", host->ns});
        for (const auto& step : steps) {
            const CommandResult r = runCommand(step);
            if (r.exitCode == 0) continue;
            *whyNot = "`" + join(step) + "` exited with " + std::to_string(r.exitCode) + ": " +
                      (r.output.empty() ? "(no output)" : r.output);
            if (geteuid() != 0) *whyNot += " (not running as root)";
            return nullptr;  // the destructor removes what was made
        }
        if (!h->linkUp()) {
            *whyNot = "the veth link between " + h->a_.ns + " and " + h->b_.ns + " did not come up within 5 s";
            return nullptr;
        }
        return h;
    }
    ~TwoHosts() {
        // Deleting a namespace also deletes its end of the veth pair, and with it the other end.
        for (const NetnsHost* host : {&a_, &b_}) runCommand({"ip", "netns", "del", host->ns});
    }
    TwoHosts(const TwoHosts&) = delete;
    TwoHosts& operator=(const TwoHosts&) = delete;

    const NetnsHost& a() const { return a_; }
    const NetnsHost& b() const { return b_; }

private:
    TwoHosts() = default;

    static std::string join(const std::vector<std::string>& words) {
        std::string s;
        for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
        return s;
    }
    // Both ends report carrier (state UP), so a connection across is not refused for a link still coming up.
    bool linkUp() const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            const auto ra = runCommand({"ip", "-n", a_.ns, "-o", "link", "show", "tb0"});
            const auto rb = runCommand({"ip", "-n", b_.ns, "-o", "link", "show", "tb1"});
            if (ra.output.find("state UP") != std::string::npos && rb.output.find("state UP") != std::string::npos)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    NetnsHost a_, b_;
};

}  // namespace trainbench::testing
