#include "engine/net/pendinglimit.h"

#include <atomic>
#include <map>
#include <mutex>

#include "engine/util/durationtext.h"

namespace trainbench::engine {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
}  // namespace

struct PendingLimit::Ticket::State {
    struct Waiting {
        std::string peer;
        Clock::time_point since;
        std::function<void()> close;
    };
    std::function<void(const std::string&)> report;
    size_t max;
    std::chrono::milliseconds idle;

    mutable std::mutex mutex;
    std::map<uint64_t, Waiting> waiting;  // by ticket id: the oldest first
    uint64_t nextId = 1;
    std::atomic<size_t> count{0};
    std::atomic<int64_t> turnedAway{0};
    std::optional<Clock::time_point> lastReport;
    int64_t unreported = 0;  // turned away since the last report

    void erase(uint64_t id) {
        std::lock_guard lock(mutex);
        waiting.erase(id);
        count = waiting.size();
    }

    // Counts one more turned away, and says so unless it did less than a second ago.
    void turnAway(const std::string& what) {
        ++turnedAway;
        std::string line;
        {
            std::lock_guard lock(mutex);
            ++unreported;
            const auto now = Clock::now();
            if (lastReport && now - *lastReport < std::chrono::seconds(1)) return;
            line = what + " (" + std::to_string(waiting.size()) + " connections wait for their Hello, at most " +
                   std::to_string(max) + "; " + std::to_string(turnedAway.load()) + " turned away so far";
            if (unreported > 1) line += ", " + std::to_string(unreported - 1) + " of them since the last report";
            line += ")";
            lastReport = now;
            unreported = 0;
        }
        if (report) report(line);
    }
};

PendingLimit::Ticket::Ticket(Ticket&& other) noexcept : state_(std::move(other.state_)), id_(other.id_) {
    other.state_.reset();
}

PendingLimit::Ticket& PendingLimit::Ticket::operator=(Ticket&& other) noexcept {
    if (this != &other) {
        release();
        state_ = std::move(other.state_);
        id_ = other.id_;
        other.state_.reset();
    }
    return *this;
}

PendingLimit::Ticket::~Ticket() { release(); }

void PendingLimit::Ticket::onEvict(std::function<void()> close) {
    if (!state_) return;
    std::lock_guard lock(state_->mutex);
    auto it = state_->waiting.find(id_);
    if (it != state_->waiting.end()) it->second.close = std::move(close);
}

void PendingLimit::Ticket::release() {
    if (!state_) return;
    state_->erase(id_);
    state_.reset();
}

PendingLimit::PendingLimit(std::function<void(const std::string&)> report, size_t max, std::chrono::milliseconds idle)
    : state_(std::make_shared<Ticket::State>()) {
    state_->report = std::move(report);
    state_->max = max;
    state_->idle = idle;
}

PendingLimit::~PendingLimit() = default;

std::optional<PendingLimit::Ticket> PendingLimit::admit(const std::string& peer) {
    Ticket::State& s = *state_;
    std::function<void()> closeOldest;
    std::string oldestPeer;
    Clock::duration oldestIdle{};
    uint64_t id = 0;
    {
        std::lock_guard lock(s.mutex);
        const auto now = Clock::now();
        // Full: the oldest gives its place if it has been idle long enough to be no real peer's.
        auto oldest = s.waiting.begin();
        if (s.waiting.size() >= s.max && oldest != s.waiting.end() && now - oldest->second.since >= s.idle) {
            closeOldest = std::move(oldest->second.close);
            oldestPeer = oldest->second.peer;
            oldestIdle = now - oldest->second.since;
            s.waiting.erase(oldest);
        }
        if (s.waiting.size() < s.max) {
            id = s.nextId++;
            s.waiting.emplace(id, Ticket::State::Waiting{peer, now, {}});
        }
        s.count = s.waiting.size();
    }
    if (!oldestPeer.empty()) {
        if (closeOldest) closeOldest();  // outside the lock: closing may release other tickets
        s.turnAway("closed the connection from " + oldestPeer + ": no Hello after " + secondsText(duration_cast<milliseconds>(oldestIdle)) +
                   ", and a newer connection needed its place");
    }
    if (id == 0) {
        s.turnAway("refused a connection from " + peer + " at once: every place is held by a connection younger than " +
                   secondsText(s.idle));
        return std::nullopt;
    }
    return Ticket(state_, id);
}

size_t PendingLimit::pending() const { return state_->count.load(); }
int64_t PendingLimit::turnedAway() const { return state_->turnedAway.load(); }

}  // namespace trainbench::engine
