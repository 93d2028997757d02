#pragma once
// The TCP sockets a process listens on, read from /proc (its descriptors' inodes, and the kernel's
// socket tables of this network namespace): what an outsider scanning the host would find open.
#include <arpa/inet.h>
#include <sys/types.h>
#include <unistd.h>

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
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(table);
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

}  // namespace trainbench::engine::test
