#pragma once
// What an outsider does to a job's tasks, for the tests that check they are refused: find the TCP
// ports a process listens on (from /proc: its descriptors' inodes in the socket tables of its own
// network namespace, as a scan of its host would find them), and connect to one.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace trainbench::engine::test {

struct ListeningSocket {
    std::string ip;  // "127.0.0.1", "::"
    int port = 0;
    std::string text() const { return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port); }
};

inline std::vector<ListeningSocket> listeningSockets(pid_t pid) {
    std::set<std::string> inodes;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        const std::string target = std::filesystem::read_symlink(e.path(), ec).string();
        if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
    std::vector<ListeningSocket> out;
    for (const char* table : {"/net/tcp", "/net/tcp6"}) {
        std::ifstream in("/proc/" + std::to_string(pid) + table);
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            std::istringstream f(line);
            std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
            f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
            if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
            const std::string hex = local.substr(0, local.find(':'));
            ListeningSocket s;
            s.port = static_cast<int>(std::strtol(local.substr(local.find(':') + 1).c_str(), nullptr, 16));
            char text[INET6_ADDRSTRLEN] = "?";
            if (hex.size() == 8) {
                in_addr a{static_cast<in_addr_t>(std::strtoul(hex.c_str(), nullptr, 16))};  // as the kernel stores it
                inet_ntop(AF_INET, &a, text, sizeof text);
            } else {
                in6_addr a{};
                for (int w = 0; w < 4; ++w) {
                    const uint32_t v = static_cast<uint32_t>(std::strtoul(hex.substr(8 * w, 8).c_str(), nullptr, 16));
                    std::memcpy(reinterpret_cast<char*>(&a) + 4 * w, &v, 4);
                }
                inet_ntop(AF_INET6, &a, text, sizeof text);
            }
            s.ip = text;
            out.push_back(s);
        }
    }
    return out;
}

// A TCP client of the test's own: connects at once, sends what it is told, notices when the other end closes.
class Stranger {
public:
    explicit Stranger(const ListeningSocket& to) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(to.port));
        inet_pton(AF_INET, to.ip.c_str(), &a.sin_addr);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
        sockaddr_in self{};
        socklen_t length = sizeof self;
        getsockname(fd_, reinterpret_cast<sockaddr*>(&self), &length);
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &self.sin_addr, ip, sizeof ip);
        address_ = std::string(ip) + ":" + std::to_string(ntohs(self.sin_port));
    }
    ~Stranger() { close(); }
    Stranger(const Stranger&) = delete;
    Stranger& operator=(const Stranger&) = delete;

    bool connected() const { return connected_; }
    const std::string& address() const { return address_; }
    void send(const void* data, size_t size) { EXPECT_EQ(::send(fd_, data, size, MSG_NOSIGNAL), static_cast<ssize_t>(size)); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    // True once the other end has closed the connection (end of stream or reset), within `limit`.
    bool closedByPeerWithin(std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        char buf[4096];
        while (fd_ >= 0 && std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return true;
            received_ += static_cast<size_t>(n);
        }
        return false;
    }
    size_t received() const { return received_; }

private:
    int fd_ = -1;
    bool connected_ = false;
    std::string address_;
    size_t received_ = 0;
};

}  // namespace trainbench::engine::test
