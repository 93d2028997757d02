// PendingLimit, the cap on a server's connections waiting for their Hello: places up to the cap,
// then a newcomer is refused while the waiting ones are young, and takes the place of the one idle
// longest once that one is old enough; places come back on release or destruction; what is turned
// away is counted and reported, at most once a second.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/net/pendinglimit.h"

namespace trainbench::engine {
namespace {

using namespace std::chrono_literals;

TEST(PendingLimit, RefusesBeyondTheCapWhileTheWaitingAreYoung) {
    std::vector<std::string> reports;
    PendingLimit limit([&](const std::string& line) { reports.push_back(line); }, 2, 1h);
    auto a = limit.admit("10.0.0.1:1");
    auto b = limit.admit("10.0.0.1:2");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(limit.pending(), 2u);
    EXPECT_FALSE(limit.admit("10.0.0.1:3"));
    EXPECT_FALSE(limit.admit("10.0.0.1:4"));
    EXPECT_EQ(limit.turnedAway(), 2);
    ASSERT_EQ(reports.size(), 1u) << "one report a second";
    EXPECT_EQ(reports[0],
              "refused a connection from 10.0.0.1:3 at once: every place is held by a connection younger than 3600 s "
              "(2 connections wait for their Hello, at most 2; 1 turned away so far)");
    a->release();  // it said Hello
    EXPECT_EQ(limit.pending(), 1u);
    auto c = limit.admit("10.0.0.1:5");
    EXPECT_TRUE(c);
    b.reset();  // it closed
    c.reset();
    EXPECT_EQ(limit.pending(), 0u);
}

TEST(PendingLimit, TheLongestIdleMakesRoomOnceOldEnough) {
    std::vector<std::string> reports;
    PendingLimit limit([&](const std::string& line) { reports.push_back(line); }, 2, 50ms);
    std::vector<std::string> closed;
    auto a = limit.admit("10.0.0.1:1");
    ASSERT_TRUE(a);
    a->onEvict([&] { closed.push_back("a"); });
    std::this_thread::sleep_for(60ms);  // a is older than the idle time now: the point of this test
    auto b = limit.admit("10.0.0.1:2");
    ASSERT_TRUE(b);
    b->onEvict([&] { closed.push_back("b"); });
    auto c = limit.admit("10.0.0.1:3");
    ASSERT_TRUE(c) << "a made room";
    EXPECT_EQ(closed, std::vector<std::string>{"a"});
    EXPECT_EQ(limit.pending(), 2u);
    EXPECT_EQ(limit.turnedAway(), 1);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].rfind("closed the connection from 10.0.0.1:1: no Hello after ", 0), 0u) << reports[0];
    EXPECT_NE(reports[0].find(", and a newer connection needed its place"), std::string::npos) << reports[0];
    a.reset();  // the evicted connection's end gives back nothing more
    EXPECT_EQ(limit.pending(), 2u);
    EXPECT_FALSE(limit.admit("10.0.0.1:4")) << "b and c are young";
    EXPECT_EQ(closed, std::vector<std::string>{"a"});
}

TEST(PendingLimit, TicketsMoveAndOutliveTheirLimit) {
    std::optional<PendingLimit::Ticket> kept;
    {
        PendingLimit limit({}, 1, 1h);
        auto t = limit.admit("10.0.0.1:1");
        ASSERT_TRUE(t);
        PendingLimit::Ticket moved = std::move(*t);
        EXPECT_EQ(limit.pending(), 1u);
        kept.emplace(std::move(moved));
        EXPECT_FALSE(limit.admit("10.0.0.1:2"));
    }
    kept.reset();  // after the limit: nothing to give back to, and nothing breaks
}

}  // namespace
}  // namespace trainbench::engine
