#include "engine/collective/gloosession.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "engine/collective/glooaddressbook.h"
#include "engine/collective/gloohandshake.h"

namespace trainbench::engine {

namespace {

thread_local std::shared_ptr<GlooSession> tCurrent;

std::mutex gLiveMutex;
std::vector<std::weak_ptr<GlooSession>> gLive;  // sessions some thread has made current

bool sameAddress(const sockaddr_storage& a, const sockaddr_storage& b) {
    return gloohandshake::addressText(a) == gloohandshake::addressText(b);
}

}  // namespace

GlooSession::GlooSession(int rank, int size, std::string token, std::chrono::milliseconds timeout, Report report)
    : rank_(rank), size_(size), token_(std::move(token)), timeout_(timeout), report_(std::move(report)) {
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_ < 0) throw std::runtime_error(std::string("eventfd failed: ") + std::strerror(errno));
}

GlooSession::~GlooSession() {
    for (const auto& [peer, fd] : placeholders_) ::close(fd);
    ::close(wake_);
}

std::string GlooSession::who() const { return "rank " + std::to_string(rank_) + " of " + std::to_string(size_); }

std::shared_ptr<GlooSession> GlooSession::current() { return tCurrent; }

void GlooSession::setCurrent(std::shared_ptr<GlooSession> session) {
    if (session) {
        std::lock_guard<std::mutex> lock(gLiveMutex);
        std::erase_if(gLive, [](const std::weak_ptr<GlooSession>& w) { return w.expired(); });
        gLive.push_back(session);
    }
    tCurrent = std::move(session);
}

std::shared_ptr<GlooSession> GlooSession::owning(int fd) {
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return nullptr;
    std::lock_guard<std::mutex> lock(gLiveMutex);
    for (const auto& w : gLive) {
        std::shared_ptr<GlooSession> s = w.lock();
        if (!s) continue;
        // The fd and its address: a number Gloo closed and reused for another session's socket is not this one.
        const std::optional<Listener> l = s->listener(fd);
        if (l && sameAddress(l->address, bound)) return s;
    }
    return nullptr;
}

void GlooSession::addListener(int fd, const sockaddr_storage& address) {
    std::lock_guard<std::mutex> lock(m_);
    std::erase_if(listeners_, [fd](const Listener& l) { return l.fd == fd; });
    Listener l;
    l.fd = fd;
    l.address = address;
    l.text = gloohandshake::addressText(address);
    for (const auto& [peer, a] : own_)
        if (sameAddress(a, address)) l.peer = peer;
    decide(l);
    listeners_.push_back(l);
}

void GlooSession::ownAddress(int peer, const sockaddr_storage& address) {
    std::lock_guard<std::mutex> lock(m_);
    own_[peer] = address;
    for (Listener& l : listeners_)
        if (sameAddress(l.address, address)) {
            l.peer = peer;
            decide(l);
        }
}

void GlooSession::peerAddress(int peer, const sockaddr_storage& address) {
    {
        std::lock_guard<std::mutex> lock(m_);
        peers_[peer] = address;
        for (Listener& l : listeners_)
            if (l.peer == peer) decide(l);
    }
    wake();
}

// Gloo's own rule (glooConnectsOut), once both listening addresses of the pair are known.
void GlooSession::decide(Listener& l) {
    if (l.peer < 0 || l.side != Side::Unknown) return;
    const auto it = peers_.find(l.peer);
    if (it == peers_.end()) return;
    l.side = glooConnectsOut(l.address, it->second) ? Side::ConnectsOut : Side::Accepts;
}

std::optional<GlooSession::Listener> GlooSession::listener(int fd) const {
    std::lock_guard<std::mutex> lock(m_);
    for (const Listener& l : listeners_)
        if (l.fd == fd) return l;
    return std::nullopt;
}

int GlooSession::destination(const sockaddr_storage& to) const {
    std::lock_guard<std::mutex> lock(m_);
    for (const auto& [peer, a] : peers_)
        if (sameAddress(a, to)) return peer;
    return -1;
}

void GlooSession::keepPlaceholder(int peer, int fd) {
    std::lock_guard<std::mutex> lock(m_);
    if (auto it = placeholders_.find(peer); it != placeholders_.end()) ::close(it->second);
    placeholders_[peer] = fd;
}

void GlooSession::dropPlaceholder(int peer) {
    std::lock_guard<std::mutex> lock(m_);
    if (auto it = placeholders_.find(peer); it != placeholders_.end()) {
        ::close(it->second);
        placeholders_.erase(it);
    }
}

void GlooSession::refused(const std::string& listener, const std::string& from, const std::string& why) {
    size_t count;
    {
        std::lock_guard<std::mutex> lock(m_);
        count = ++refusedCount_;
        if (refused_.size() < kRefusalsKept) refused_.push_back(from + " (" + why + ")");
    }
    // A flood of strangers is counted, not logged line by line.
    if (!report_ || count > kRefusalsReported) return;
    report_(who() + ": refused a connection from " + from + " to " + listener + ": " + why +
            (count == kRefusalsReported ? " (further refusals are only counted)" : ""));
}

void GlooSession::failed(const std::string& what) {
    std::lock_guard<std::mutex> lock(m_);
    failed_.push_back(what);
}

std::string GlooSession::summary() const {
    std::lock_guard<std::mutex> lock(m_);
    std::string s;
    for (const std::string& f : failed_) s += (s.empty() ? "" : "; ") + f;
    if (refusedCount_ > 0) {
        s += std::string(s.empty() ? "" : "; ") + "refused " + std::to_string(refusedCount_) +
             " connection(s) that did not prove the job token:";
        for (size_t i = 0; i < refused_.size(); ++i) s += (i ? ", " : " ") + refused_[i];
        if (refused_.size() < refusedCount_) s += ", ...";
    }
    return s;
}

void GlooSession::wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
}

void GlooSession::drainWake() const {
    uint64_t v;
    [[maybe_unused]] const ssize_t n = ::read(wake_, &v, sizeof v);
}

void GlooSession::cancel() {
    {
        std::lock_guard<std::mutex> lock(m_);
        cancelled_ = true;
    }
    wake();
}

bool GlooSession::cancelled() const {
    std::lock_guard<std::mutex> lock(m_);
    return cancelled_;
}

}  // namespace trainbench::engine
