#include "engine/emulation/messageschedule.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace trainbench::engine {
namespace {

// The simulator's events by time: message `msg` may enter hop `hop` of its route (hop == route
// length: it has arrived). Lockstep schedules put thousands of events on the same instant, so a
// heap of distinct times with a bucket each does far less work than a heap of events; within a
// bucket, events keep the order they were made in.
class EventQueue {
public:
    struct Entry {
        MessageSchedule::MessageId msg;
        uint32_t hop;
    };

    bool empty() const { return times_.empty(); }

    void push(double t, MessageSchedule::MessageId msg, uint32_t hop) {
        auto [it, fresh] = buckets_.try_emplace(t);
        if (fresh) {
            times_.push(t);
            if (!spare_.empty()) {
                it->second = std::move(spare_.back());
                spare_.pop_back();
            }
        }
        it->second.push_back({msg, hop});
    }

    // Moves the events of the earliest time into `out` and returns that time. Events pushed at the
    // same time meanwhile go to a new bucket, taken next.
    double takeEarliest(std::vector<Entry>& out) {
        const double t = times_.top();
        times_.pop();
        auto node = buckets_.extract(t);
        out.clear();
        spare_.push_back(std::move(out));
        out = std::move(node.mapped());
        return t;
    }

private:
    std::priority_queue<double, std::vector<double>, std::greater<>> times_;
    std::unordered_map<double, std::vector<Entry>> buckets_;
    std::vector<std::vector<Entry>> spare_;  // emptied buckets, to reuse their memory
};

}  // namespace

int MessageSchedule::addNode() { return nodes_++; }

void MessageSchedule::reserve(size_t messages, size_t route_entries) {
    messages_.reserve(messages);
    deps_.reserve(messages + messages / 2);
    routes_.reserve(route_entries);
}

int MessageSchedule::addLink(int from, int to, LinkParams params) {
    if (from < 0 || from >= nodes_ || to < 0 || to >= nodes_ || from == to)
        throw std::logic_error("MessageSchedule::addLink: bad endpoints " + std::to_string(from) + " -> " +
                               std::to_string(to) + " (" + std::to_string(nodes_) + " nodes)");
    links_.push_back({from, to, params});
    return static_cast<int>(links_.size()) - 1;
}

MessageSchedule::MessageId MessageSchedule::send(std::span<const int> route, double bytes,
                                                 std::span<const MessageId> after, int phase) {
    if (route.empty() || phase < 0) throw std::logic_error("MessageSchedule::send: a message needs a route and a phase");
    for (size_t k = 0; k < route.size(); ++k) {
        if (route[k] < 0 || route[k] >= static_cast<int>(links_.size()))
            throw std::logic_error("MessageSchedule::send: no link " + std::to_string(route[k]));
        if (k > 0 && links_[static_cast<size_t>(route[k - 1])].to != links_[static_cast<size_t>(route[k])].from)
            throw std::logic_error("MessageSchedule::send: route breaks between links " +
                                   std::to_string(route[k - 1]) + " and " + std::to_string(route[k]));
    }
    ++sends_;
    phases_ = std::max(phases_, phase + 1);
    return addMessage(route, bytes, after, phase);
}

MessageSchedule::MessageId MessageSchedule::join(std::span<const MessageId> after) {
    return addMessage({}, 0.0, after, -1);
}

MessageSchedule::MessageId MessageSchedule::addMessage(std::span<const int> route, double bytes,
                                                       std::span<const MessageId> after, int phase) {
    const auto id = static_cast<MessageId>(messages_.size());
    Message m{bytes, static_cast<uint32_t>(routes_.size()), static_cast<uint32_t>(deps_.size()),
              static_cast<uint32_t>(route.size()), 0, phase};
    routes_.insert(routes_.end(), route.begin(), route.end());
    for (MessageId d : after) {
        if (d == kNone) continue;
        if (d < 0 || d >= id) throw std::logic_error("MessageSchedule: a message may only wait for earlier ones");
        deps_.push_back(d);
        ++m.dep_count;
    }
    messages_.push_back(m);
    return id;
}

MessageSchedule::Result MessageSchedule::run() const {
    const size_t n = messages_.size();
    // Who waits for whom, inverted: dependents of each message, as one flat array.
    std::vector<uint32_t> firstDependent(n + 1, 0);
    for (MessageId d : deps_) ++firstDependent[static_cast<size_t>(d) + 1];
    for (size_t i = 0; i < n; ++i) firstDependent[i + 1] += firstDependent[i];
    std::vector<MessageId> dependents(deps_.size());
    {
        std::vector<uint32_t> fill(firstDependent.begin(), firstDependent.end() - 1);
        for (size_t m = 0; m < n; ++m) {
            const Message& msg = messages_[m];
            for (uint32_t k = 0; k < msg.dep_count; ++k)
                dependents[fill[static_cast<size_t>(deps_[msg.dep_begin + k])]++] = static_cast<MessageId>(m);
        }
    }

    EventQueue events;
    // A link's FIFO queue is fully described by when its last accepted message leaves it: messages
    // reach it in time order, so each starts at max(ready, free).
    std::vector<double> linkFree(links_.size(), 0.0);
    std::vector<uint32_t> waiting(n);
    std::vector<MessageId> readyNow;  // became ready at the current time, not yet on a link

    Result result;
    result.phase_end_s.assign(static_cast<size_t>(phases_), 0.0);
    result.phase_messages.assign(static_cast<size_t>(phases_), 0);
    size_t arrived = 0;
    auto arrive = [&](MessageId id, double t) {
        const Message& msg = messages_[static_cast<size_t>(id)];
        ++arrived;
        result.seconds = std::max(result.seconds, t);
        if (msg.phase >= 0) {
            const auto ph = static_cast<size_t>(msg.phase);
            result.phase_end_s[ph] = std::max(result.phase_end_s[ph], t);
            ++result.phase_messages[ph];
        }
        for (uint32_t k = firstDependent[static_cast<size_t>(id)]; k < firstDependent[static_cast<size_t>(id) + 1]; ++k)
            if (--waiting[static_cast<size_t>(dependents[k])] == 0) readyNow.push_back(dependents[k]);
    };
    auto enter = [&](MessageId id, uint32_t hop, double t) {
        const Message& msg = messages_[static_cast<size_t>(id)];
        if (hop == msg.route_len) return arrive(id, t);  // a join
        const size_t link = static_cast<size_t>(routes_[msg.route_begin + hop]);
        const LinkParams& p = links_[link].params;
        const double start = std::max(t, linkFree[link]);
        const double leaves = start + p.alpha_s + msg.bytes * p.beta_s_per_byte;
        linkFree[link] = leaves;
        // Cut-through: the head is across after alpha; the last hop delivers the whole message.
        if (hop + 1 < msg.route_len)
            events.push(start + p.alpha_s, id, hop + 1);
        else
            events.push(leaves, id, msg.route_len);
    };
    // What becomes ready at time t enters its first link at once: everything earlier has been
    // dealt with, so the links' FIFO order holds.
    auto drain = [&](double t) {
        while (!readyNow.empty()) {
            const MessageId id = readyNow.back();
            readyNow.pop_back();
            enter(id, 0, t);
        }
    };
    for (size_t m = 0; m < n; ++m) {
        waiting[m] = messages_[m].dep_count;
        if (waiting[m] == 0) readyNow.push_back(static_cast<MessageId>(m));
    }
    std::reverse(readyNow.begin(), readyNow.end());  // creation order onto the links
    drain(0.0);
    std::vector<EventQueue::Entry> batch;
    while (!events.empty()) {
        const double t = events.takeEarliest(batch);
        for (const EventQueue::Entry& e : batch) {
            enter(e.msg, e.hop, t);
            drain(t);
        }
    }
    if (arrived != n)
        throw std::logic_error("MessageSchedule::run: " + std::to_string(n - arrived) + " of " + std::to_string(n) +
                               " messages never became ready");
    return result;
}

}  // namespace trainbench::engine
