#pragma once
// Ranks of a GlooCollective group as real processes (tests/workers/glooworker.cpp) on loopback, for
// the tests of GlooCollective (test_gloo.cpp) and of its guard against strangers (test_gloostrangers.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "childprocess.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "tempdirtest.h"

namespace trainbench::engine::test {

inline std::vector<std::string> linesStartingWith(const std::string& text, const std::string& prefix) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
}

class GlooProcessTest : public TempDirTest {
public:
    std::unique_ptr<ChildProcess> spawn(int rank, int size, std::vector<std::string> extra,
                                        const std::string& token = {}) {
        std::vector<std::string> args{"--rank", std::to_string(rank), "--size", std::to_string(size), "--token",
                                      token.empty() ? token_ : token};
        args.insert(args.end(), extra.begin(), extra.end());
        return std::make_unique<ChildProcess>(TRAINBENCH_GLOO_WORKER, args, dir_ / ("rank" + std::to_string(rank)));
    }

    // Starts rank 0 serving the store and returns its host:port ("" and a failure if it never says).
    std::string startChief(std::vector<std::unique_ptr<ChildProcess>>& ranks, int size,
                           std::vector<std::string> extra) {
        using namespace std::chrono_literals;
        extra.insert(extra.end(), {"--serve", path("store-address")});
        ranks.push_back(spawn(0, size, extra));
        const auto end = std::chrono::steady_clock::now() + 30s;
        while (std::chrono::steady_clock::now() < end && ranks[0]->running()) {
            const std::string address = readText(dir_ / "store-address");
            if (!address.empty()) return address.substr(0, address.find('\n'));
            std::this_thread::sleep_for(5ms);
        }
        ADD_FAILURE() << "rank 0 did not start the store: " << ranks[0]->err();
        return {};
    }

protected:
    std::string token_ = RendezvousServer::randomToken();
};

}  // namespace trainbench::engine::test
