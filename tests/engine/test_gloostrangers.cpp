// Strangers on the ports Gloo's pairs listen on (engine/collective/glooguard.h), with real rank
// processes (test_glooworker) on loopback. While rank 0 waits for rank 1 to join, the test finds rank
// 0's listening port for rank 1 from /proc, as a scan of the host would, and connects to it: sending
// garbage, closing at once, staying silent, sending a well-formed proof made with another job's
// token, or replaying a proof made for another port. Then rank 1 joins. Rank 0 either accepts the
// pair (its address, 127.0.0.1, is the lower) or connects it out (the hosts swapped), so both of
// Gloo's paths meet the stranger. Either way the job must complete with exact sums, rank 0 must name
// the stranger's address and why it was refused, and the stranger must get nothing of the job.
// When the peer never comes, the rank fails within its timeout naming its port and the strangers.
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/collective/gloocollective.h"
#include "engine/collective/glooguard.h"
#include "engine/collective/gloohandshake.h"
#include "engine/rendezvous/rendezvousclient.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/util/errors.h"
#include "glooprocesstest.h"
#include "stranger.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::ChildProcess;
using test::GlooProcessTest;
using test::linesStartingWith;
using test::ListeningSocket;
using test::Stranger;

// Rank 0's listening port for rank 1: the one it listens on besides the store, once rank 0 has
// published it in the store (from then on a peer, or a stranger who scanned the host, may connect).
ListeningSocket glooPort(ChildProcess& rank0, const std::string& storeAddress, const std::string& token) {
    const int storePort = std::stoi(storeAddress.substr(storeAddress.rfind(':') + 1));
    const auto deadline = Clock::now() + 30s;
    while (Clock::now() < deadline && rank0.running()) {
        std::vector<ListeningSocket> gloo;
        for (const ListeningSocket& s : test::listeningSockets(rank0.pid()))
            if (s.port != storePort) gloo.push_back(s);
        if (gloo.size() == 1) {
            RendezvousClient(storeAddress, token, 30s).wait({"gloo/0"});
            return gloo[0];
        }
        std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "rank 0 never listened for rank 1: " << rank0.err();
    return {};
}

enum class Attack { Garbage, EarlyClose, Silence, WrongToken, ReplayedProof };
enum class Side { Accepts, ConnectsOut };

std::string name(Attack a) {
    switch (a) {
        case Attack::Garbage: return "Garbage";
        case Attack::EarlyClose: return "EarlyClose";
        case Attack::Silence: return "Silence";
        case Attack::WrongToken: return "WrongToken";
        case Attack::ReplayedProof: return "ReplayedProof";
    }
    return {};
}

class GlooStrangerTest : public GlooProcessTest, public ::testing::WithParamInterface<std::tuple<Attack, Side>> {
public:
    // Does to `stranger` what `attack` says; the stranger is connected to `port`, rank 0's for rank 1.
    void attack(Attack a, Stranger& stranger, const ListeningSocket& port) {
        const gloohandshake::Nonce nonce = gloohandshake::randomNonce();
        if (a == Attack::Garbage) {
            const std::string http = "GET / HTTP/1.1\r\nHost: trainbench\r\n\r\n";
            stranger.send(http.data(), http.size());
        } else if (a == Attack::EarlyClose) {
            stranger.close();
        } else if (a == Attack::WrongToken) {
            const auto hello = gloohandshake::makeHello("token-of-another-job", {1, 0, port.text()}, nonce);
            stranger.send(hello.data(), hello.size());
        } else if (a == Attack::ReplayedProof) {  // the job's own token, but proved for another port
            const ListeningSocket other{port.ip, port.port == 65535 ? 1 : port.port + 1};
            const auto hello = gloohandshake::makeHello(token_, {1, 0, other.text()}, nonce);
            stranger.send(hello.data(), hello.size());
        }
    }

    static std::string why(Attack a, Side side, const ListeningSocket& port) {
        switch (a) {
            case Attack::Garbage: return "not a trainbench Gloo hello (first bytes 47 45 54 20 2f";
            case Attack::EarlyClose: return "closed the connection after 0 byte(s), without a proof";
            case Attack::Silence:
                return side == Side::Accepts ? "sent no proof before rank 1's connection proved it"
                                             : "sent no proof before rank 0 connected out";
            case Attack::WrongToken:
            case Attack::ReplayedProof: return "its proof does not match the job token for rank 1 to rank 0 on " + port.text();
        }
        return {};
    }
};

TEST_P(GlooStrangerTest, IsRefusedAndNamedAndTheJobCompletesWithExactSums) {
    const auto [kind, side] = GetParam();
    // Gloo's rule: of a pair, the side with the lower listening address accepts.
    const std::string host0 = side == Side::Accepts ? "127.0.0.1" : "127.0.0.2";
    const std::string host1 = side == Side::Accepts ? "127.0.0.2" : "127.0.0.1";
    const std::vector<std::string> once{"--scenario", "once", "--timeout-ms", "20000"};
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    std::vector<std::string> args = once;
    args.insert(args.end(), {"--host", host0});
    const std::string store = startChief(ranks, 2, args);
    ASSERT_FALSE(store.empty());
    const ListeningSocket port = glooPort(*ranks[0], store, token_);
    ASSERT_GT(port.port, 0);
    EXPECT_EQ(port.ip, host0) << "Gloo listens on the task's own address, nowhere else";

    Stranger stranger(port);
    ASSERT_TRUE(stranger.connected()) << port.text();
    attack(kind, stranger, port);
    if (kind == Attack::Garbage || kind == Attack::WrongToken || kind == Attack::ReplayedProof) {
        EXPECT_TRUE(stranger.closedByPeerWithin(20s)) << "refused at once, before rank 1 exists";
    }

    args = once;
    args.insert(args.end(), {"--store", store, "--host", host1});
    ranks.push_back(spawn(1, 2, args));
    std::vector<std::string> outs;
    for (int r = 0; r < 2; ++r) {
        const auto result = ranks[r]->wait(120s);
        EXPECT_FALSE(result.timedOut) << "rank " << r;
        EXPECT_EQ(result.signal, 0) << "rank " << r << " died of signal " << result.signal << ": " << ranks[r]->err();
        EXPECT_EQ(result.exitCode, 0) << "rank " << r << ": " << ranks[r]->err();
        outs.push_back(ranks[r]->out());
    }
    // Each rank checked its sums against the exact ones (exit 5 otherwise); both hold the same bits.
    const auto sums = linesStartingWith(outs[0], "allreduce exact ");
    EXPECT_EQ(sums.size(), 2u) << outs[0];
    EXPECT_EQ(linesStartingWith(outs[1], "allreduce exact "), sums);

    const std::string err = ranks[0]->err();
    EXPECT_NE(err.find("rank 0 of 2: refused a connection from " + stranger.address() + " to " + port.text() +
                       " (rank 0's port for rank 1): " + why(kind, side, port)),
              std::string::npos)
        << err;
    if (kind != Attack::EarlyClose) {
        EXPECT_TRUE(stranger.closedByPeerWithin(5s));
        EXPECT_EQ(stranger.received(), 0u) << "the stranger got bytes of the job";
    }
}

INSTANTIATE_TEST_SUITE_P(
    AttacksOnBothSides, GlooStrangerTest,
    ::testing::Combine(::testing::Values(Attack::Garbage, Attack::EarlyClose, Attack::Silence, Attack::WrongToken,
                                         Attack::ReplayedProof),
                       ::testing::Values(Side::Accepts, Side::ConnectsOut)),
    [](const ::testing::TestParamInfo<std::tuple<Attack, Side>>& p) {
        return name(std::get<0>(p.param)) + (std::get<1>(p.param) == Side::Accepts ? "_Accepting" : "_ConnectingOut");
    });

using GlooStrangerFailureTest = GlooProcessTest;

TEST_F(GlooStrangerFailureTest, ARankWhosePeerNeverJoinsNamesTheStrangersItRefused) {
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::string store = startChief(ranks, 2, {"--scenario", "once", "--timeout-ms", "2000"});
    ASSERT_FALSE(store.empty());
    const ListeningSocket port = glooPort(*ranks[0], store, token_);
    ASSERT_GT(port.port, 0);
    Stranger stranger(port);
    stranger.send("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);  // the start of a TLS ClientHello
    const auto result = ranks[0]->wait(60s);
    const std::string err = ranks[0]->err();
    EXPECT_FALSE(result.timedOut);
    EXPECT_EQ(result.exitCode, 2) << err;
    EXPECT_NE(err.find("RendezvousError: rank 0 of 2: joining the group: "), std::string::npos) << err;
    EXPECT_NE(err.find("refused 1 connection(s) that did not prove the job token: " + stranger.address() +
                       " (not a trainbench Gloo hello (first bytes 16 03 01"),
              std::string::npos)
        << err;
}

// Rank 1 publishes its address but never connects (the test plays it in the store): rank 0, which
// accepts this pair, waits for it behind a silent stranger, and fails at its timeout naming both.
TEST_F(GlooStrangerFailureTest, APeerThatNeverConnectsFailsTheRankNamingItsPortAndTheStranger) {
    std::vector<std::unique_ptr<ChildProcess>> ranks;
    const std::string store = startChief(ranks, 2, {"--scenario", "once", "--timeout-ms", "5000"});
    ASSERT_FALSE(store.empty());
    const ListeningSocket port = glooPort(*ranks[0], store, token_);
    ASSERT_GT(port.port, 0);
    Stranger stranger(port);
    {
        sockaddr_storage nowhere{};
        auto& in = reinterpret_cast<sockaddr_in&>(nowhere);
        in.sin_family = AF_INET;
        in.sin_port = htons(1);
        inet_pton(AF_INET, "127.0.0.2", &in.sin_addr);  // above rank 0's 127.0.0.1: rank 0 accepts
        const std::vector<char> record = gloo::transport::tcp::Address(nowhere).bytes();
        RendezvousClient(store, token_, 5s).set("gloo/1", record);
    }
    const auto t0 = Clock::now();
    const auto result = ranks[0]->wait(60s);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::string err = ranks[0]->err();
    EXPECT_FALSE(result.timedOut);
    EXPECT_EQ(result.signal, 0) << err;
    EXPECT_EQ(result.exitCode, 3) << err;
    EXPECT_LT(seconds, 30.0) << "fails within its timeout (5 s), with slack for a busy machine";
    EXPECT_NE(err.find("CollectiveError: rank 0 of 2: connecting to the other ranks failed: "), std::string::npos) << err;
    EXPECT_NE(err.find("no connection to " + port.text() + " (rank 0's port for rank 1) proved the job token within 5000 ms"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("refused 1 connection(s) that did not prove the job token: " + stranger.address() +
                       " (sent no proof within 5000 ms)"),
              std::string::npos)
        << err;
    EXPECT_TRUE(stranger.closedByPeerWithin(5s));
    EXPECT_EQ(stranger.received(), 0u);
}

TEST(GlooGuard, IsInForceInThisProgram) { EXPECT_EQ(GlooGuard::unavailable(), ""); }

TEST(GlooGuard, AWildcardListeningAddressIsRefused) {
    RendezvousServerConfig config;
    config.token = RendezvousServer::randomToken();
    RendezvousServer server(config);
    GlooTransport transport;
    transport.hostname = "0.0.0.0";
    try {
        GlooCollective c(0, 2, server.address(), config.token, 2s, transport);
        ADD_FAILURE() << "listened on every interface";
    } catch (const CollectiveError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 0 of 2: cannot listen on host 0.0.0.0: 0.0.0.0:0 is the wildcard address"),
                  std::string::npos)
            << what;
    }
}

// libgloo's socket calls outside a GlooCollective (hence outside a guard) are refused, not let through.
TEST(GlooGuard, GlooUsedWithoutTheGuardCannotListen) {
    gloo::rendezvous::HashStore store;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice("127.0.0.1");
    gloo::rendezvous::Context context(0, 2);
    context.setTimeout(1s);
    try {
        context.connectFullMesh(store, device);
        ADD_FAILURE() << "Gloo connected without the guard";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("listen: Operation not permitted"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace trainbench::engine
