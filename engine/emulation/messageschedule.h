#pragma once
// A network of directed α-β links and a set of messages that depend on each other, timed by an
// event-driven loop. It knows no collective and no formula: collectivesimulator.cpp lays the
// algorithms out as messages here, and the result checks the closed forms of collectivemodel.h.
//
// Rules (docs/collectives-model.md, "The simulator"):
//  * a message is ready when every message it depends on has arrived;
//  * a link direction carries one message at a time, in the order messages reach it (FIFO), each
//    for alpha + bytes * beta;
//  * a message routed over several links goes cut-through: it may enter the next link once its
//    head has crossed the previous one (after that link's alpha).
#include <cstdint>
#include <span>
#include <vector>

#include "engine/emulation/topology.h"

namespace trainbench::engine {

class MessageSchedule {
public:
    using MessageId = int32_t;
    static constexpr MessageId kNone = -1;

    int addNode();
    int nodeCount() const { return nodes_; }
    // One direction from `from` to `to`; returns its id.
    int addLink(int from, int to, LinkParams params);

    // A message of `bytes` over `route` (links end to end), ready once every message of `after`
    // (kNone entries are skipped) has arrived. `phase` groups messages for the per-phase times.
    MessageId send(std::span<const int> route, double bytes, std::span<const MessageId> after, int phase);
    // A zero-time join: "arrives" as soon as every message of `after` has. Not counted as a message.
    MessageId join(std::span<const MessageId> after);

    int64_t messageCount() const { return sends_; }
    // Room for this many messages (joins included) and route entries, to build big schedules in
    // one allocation.
    void reserve(size_t messages, size_t route_entries);

    struct Result {
        double seconds = 0.0;                // when the last message arrived
        std::vector<double> phase_end_s;     // per phase: when its last message arrived (0 if none)
        std::vector<int64_t> phase_messages;
    };
    // Runs the event loop. Throws std::logic_error if some message can never become ready.
    Result run() const;

private:
    struct Link {
        int from;
        int to;
        LinkParams params;
    };
    struct Message {
        double bytes;
        uint32_t route_begin;
        uint32_t dep_begin;
        uint32_t route_len;
        uint32_t dep_count;
        int32_t phase;  // -1 for joins
    };

    MessageId addMessage(std::span<const int> route, double bytes, std::span<const MessageId> after, int phase);

    int nodes_ = 0;
    int64_t sends_ = 0;
    int phases_ = 0;
    std::vector<Link> links_;
    std::vector<Message> messages_;
    std::vector<int32_t> routes_;  // link ids, message by message
    std::vector<MessageId> deps_;  // prerequisites, message by message
};

}  // namespace trainbench::engine
