// FramedClient's deadlines: a send to a peer that has stopped reading fails after the send timeout
// without progress, naming the peer and the message, and leaves the connection unusable; a frame
// that arrives slowly but steadily is waited for past the receive timeout; a server that answers
// no connection attempt fails the connect at its timeout.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "engine/strategy/framedclient.h"
#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"
#include "pstestutil.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;

TEST(FramedClient, ASendThePeerDoesNotReadFailsAfterTheTimeout) {
    test::Listener listener(4096);
    FramedClient client("127.0.0.1", listener.port(), "the stopped peer", 5s, 300ms);
    test::FrameSocket peer = listener.accept();  // and never reads
    const std::vector<float> values(4'000'000, 1.0f);  // 16 MB: more than both sockets' buffers
    const std::string frame = ps::Params::encode(1, values.data(), values.size());
    auto sent = std::async(std::launch::async, [&] {
        try {
            client.send(frame);
        } catch (const ConnectionError& e) {
            return std::string(e.what());
        }
        return std::string("sent");
    });
    if (sent.wait_for(10s) != std::future_status::ready) {
        peer.close();  // what ends the send on a build that waits forever
        ADD_FAILURE() << "the send still waits 10 s after the peer stopped reading (timeout 300 ms)";
    }
    const std::string why = sent.get();
    EXPECT_EQ(why.rfind("the stopped peer: took no bytes for 300 ms (", 0), 0u) << why;
    EXPECT_NE(why.find(" of the " + std::to_string(frame.size()) +
                       " bytes of a Params message sent): it has stopped reading (stopped, hung or cut off)"),
              std::string::npos)
        << why;
    try {
        client.send(ps::Heartbeat{}.encode());
        ADD_FAILURE() << "a connection that lost part of a frame was used again";
    } catch (const ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("the connection is unusable (took no bytes for 300 ms"), std::string::npos)
            << e.what();
    }
}

TEST(FramedClient, AFrameArrivingSlowlyButSteadilyIsWaitedFor) {
    test::Listener listener;
    FramedClient client("127.0.0.1", listener.port(), "a slow peer", 5s, 5s);
    test::FrameSocket peer = listener.accept();
    const std::string frame = ps::ErrorMessage{"slow"}.encode();
    std::thread trickle([&] {
        for (char byte : frame) {  // one byte every 100 ms: 2.4 s in all, the timeout is 1 s
            peer.send(std::string(1, byte));
            std::this_thread::sleep_for(100ms);
        }
    });
    try {
        client.receive(1s);
        ADD_FAILURE() << "an Error message is thrown as ConnectionError";
    } catch (const ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("a slow peer: closed the connection: slow"), std::string::npos) << e.what();
    }
    trickle.join();
}

// A server whose queue of connections not yet accepted is full answers no more connection attempts
// (Linux drops their SYNs): the connect gives up at its timeout, not when the kernel stops retrying
// (two minutes later).
TEST(FramedClient, AConnectNobodyAnswersFailsAtTheConnectTimeout) {
    test::Listener full(0, 0);  // no connection waits to be accepted beyond the first
    const int first = test::connectToLoopback(full.port());
    auto connected = std::async(std::launch::async, [&] {
        return test::errorOf<ConnectionError>([&] { FramedClient("127.0.0.1", full.port(), "a full server", 1s, 1s); });
    });
    if (connected.wait_for(20s) != std::future_status::ready) {
        ADD_FAILURE() << "the connect still waits 20 s after its timeout of 1 s";
        ::shutdown(full.fd(), SHUT_RDWR);  // what ends the connect on a build that waits for the kernel
    }
    const std::string why = connected.get();
    EXPECT_NE(why.find("a full server: could not connect within 1000 ms (last error: no answer to the connection "
                       "attempt); is the task running and is this its address?"),
              std::string::npos)
        << why;
    ::close(first);
}

}  // namespace
}  // namespace trainbench::engine
