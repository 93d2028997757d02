// The simulator's event loop on hand-made schedules: a link carries one message at a time (FIFO),
// messages wait for their dependencies, multi-link routes go cut-through, phases end when their
// last message arrives.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "engine/emulation/messageschedule.h"

namespace trainbench::engine {
namespace {

const LinkParams kScheduleLink{2e-6, 1e-9};  // 2 µs + 1 ns per byte: 1000 bytes take 3 µs

TEST(MessageSchedule, OneLinkCarriesOneMessageAtATime) {
    MessageSchedule s;
    s.addNode();
    s.addNode();
    const int link = s.addLink(0, 1, kScheduleLink);
    for (int i = 0; i < 3; ++i) s.send({&link, 1}, 1000.0, {}, 0);
    // Three 3 µs messages ready at once leave one after the other.
    EXPECT_NEAR(s.run().seconds, 9e-6, 1e-15);
}

TEST(MessageSchedule, OppositeDirectionsAndOtherLinksDoNotQueue) {
    MessageSchedule s;
    for (int i = 0; i < 3; ++i) s.addNode();
    const int ab = s.addLink(0, 1, kScheduleLink), ba = s.addLink(1, 0, kScheduleLink), bc = s.addLink(1, 2, kScheduleLink);
    s.send({&ab, 1}, 1000.0, {}, 0);
    s.send({&ba, 1}, 1000.0, {}, 0);
    s.send({&bc, 1}, 1000.0, {}, 0);
    EXPECT_NEAR(s.run().seconds, 3e-6, 1e-15);
}

TEST(MessageSchedule, MessagesWaitForTheirDependencies) {
    MessageSchedule s;
    for (int i = 0; i < 3; ++i) s.addNode();
    const int ab = s.addLink(0, 1, kScheduleLink), bc = s.addLink(1, 2, kScheduleLink);
    const auto first = s.send({&ab, 1}, 1000.0, {}, 0);
    const auto second = s.send({&bc, 1}, 1000.0, {&first, 1}, 1);
    const auto joined = s.join(std::vector{first, second});
    s.send({&ab, 1}, 0.0, {&joined, 1}, 1);  // 2 µs after the join at 6 µs
    const MessageSchedule::Result r = s.run();
    EXPECT_NEAR(r.seconds, 8e-6, 1e-15);
    ASSERT_EQ(r.phase_end_s.size(), 2u);
    EXPECT_NEAR(r.phase_end_s[0], 3e-6, 1e-15);
    EXPECT_NEAR(r.phase_end_s[1], 8e-6, 1e-15);
    EXPECT_EQ(r.phase_messages[1], 2);
    EXPECT_EQ(s.messageCount(), 3);  // the join is not a message
}

TEST(MessageSchedule, RoutesGoCutThrough) {
    MessageSchedule s;
    std::vector<int> route;
    s.addNode();
    for (int h = 0; h < 4; ++h) {
        s.addNode();
        route.push_back(s.addLink(h, h + 1, kScheduleLink));
    }
    s.send(route, 1000.0, {}, 0);
    // The head crosses each link in 2 µs, the body streams behind it: 4·2 µs + 1 µs.
    EXPECT_NEAR(s.run().seconds, 9e-6, 1e-15);
}

TEST(MessageSchedule, ABusyLinkDelaysAMessagePassingThrough) {
    MessageSchedule s;
    for (int i = 0; i < 3; ++i) s.addNode();
    const int ab = s.addLink(0, 1, kScheduleLink), bc = s.addLink(1, 2, kScheduleLink);
    s.send({&bc, 1}, 1000.0, {}, 0);  // holds b->c until 3 µs
    const int route[] = {ab, bc};
    s.send(route, 1000.0, {}, 0);  // head at b after 2 µs, waits until 3 µs, arrives at 6 µs
    EXPECT_NEAR(s.run().seconds, 6e-6, 1e-15);
}

TEST(MessageSchedule, RejectsBrokenRoutes) {
    MessageSchedule s;
    for (int i = 0; i < 3; ++i) s.addNode();
    const int ab = s.addLink(0, 1, kScheduleLink), ac = s.addLink(0, 2, kScheduleLink);
    const int broken[] = {ab, ac};
    EXPECT_THROW(s.send(broken, 1.0, {}, 0), std::logic_error);
    EXPECT_THROW(s.addLink(0, 0, kScheduleLink), std::logic_error);
    const MessageSchedule::MessageId later = 5;
    EXPECT_THROW(s.send({&ab, 1}, 1.0, {&later, 1}, 0), std::logic_error);
}

}  // namespace
}  // namespace trainbench::engine
