#pragma once
// The connections of a server (the rendezvous store, a parameter server, the coordinator) that have
// not yet said Hello with the job's token. Each costs a descriptor and a little memory until its
// Hello timeout; a stranger opening them by the thousand would take the server's descriptors and
// keep real peers out. So at most `max` wait at once. One more is closed at once (refused), unless
// a waiting one has been idle for `idle` already: a real peer says Hello as soon as it is
// connected, so that one is a flood's and gives its place to the newcomer (it is closed instead).
// Either way the connection turned away is counted, and reported at most once a second.
// Used on the server's io thread; pending() and turnedAway() may be read from any thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace trainbench::engine {

class PendingLimit {
public:
    // Twice the most peers one server of a job has (a parameter server: 64 workers and the
    // coordinator), so that a job whose tasks all connect at once never meets it.
    static constexpr size_t kMaxPendingConnections = 128;
    // Far beyond the time a real peer takes from its connect to its Hello, even on a loaded machine.
    static constexpr std::chrono::milliseconds kIdleBeforeEviction{1000};

    // A waiting connection's place: given back by release() (the connection said Hello) or when
    // the ticket is destroyed (the connection closed).
    class Ticket {
    public:
        Ticket() = default;
        Ticket(Ticket&& other) noexcept;
        Ticket& operator=(Ticket&& other) noexcept;
        Ticket(const Ticket&) = delete;
        Ticket& operator=(const Ticket&) = delete;
        ~Ticket();
        // How to close the connection should a newer one take its place (called on the io thread).
        void onEvict(std::function<void()> close);
        void release();

    private:
        friend class PendingLimit;
        struct State;
        Ticket(std::shared_ptr<State> state, uint64_t id) : state_(std::move(state)), id_(id) {}
        std::shared_ptr<State> state_;
        uint64_t id_ = 0;
    };

    // `report` gets one line per reported refusal, without the server's name (the caller adds it).
    explicit PendingLimit(std::function<void(const std::string&)> report, size_t max = kMaxPendingConnections,
                          std::chrono::milliseconds idle = kIdleBeforeEviction);
    ~PendingLimit();
    PendingLimit(const PendingLimit&) = delete;
    PendingLimit& operator=(const PendingLimit&) = delete;

    // A place for the new connection from `peer` (host:port), or nothing: the caller closes it at once.
    std::optional<Ticket> admit(const std::string& peer);

    size_t pending() const;       // connections waiting for their Hello
    int64_t turnedAway() const;   // refused at once, or closed to make room for a newer one

private:
    std::shared_ptr<Ticket::State> state_;
};

}  // namespace trainbench::engine
