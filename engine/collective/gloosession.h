#pragma once
// What the guarded socket calls of one GlooCollective's rendezvous share (glooguard.h): the rank, the
// job token and timeout, the pairs' listening sockets and which side of each pair connects, the
// strangers refused so far. Created per GlooCollective constructor; the interposed calls find it by
// thread (listen, connect: the constructor's thread) or by listening socket (accept: Gloo's loop).
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::engine {

class GlooSession {
public:
    using Report = std::function<void(const std::string&)>;
    // Which end of a pair's connection this rank is; Gloo decides it by comparing the two
    // listening addresses (glooaddressbook.h), and closes the listener of a pair that connects out.
    enum class Side { Unknown, Accepts, ConnectsOut };
    struct Listener {
        int fd = -1;
        std::string text;  // its address, "ip:port"
        sockaddr_storage address{};
        int peer = -1;  // the rank it was published for, -1 until the address book says
        Side side = Side::Unknown;
    };

    GlooSession(int rank, int size, std::string token, std::chrono::milliseconds timeout, Report report);
    ~GlooSession();  // closes the placeholders still kept
    GlooSession(const GlooSession&) = delete;
    GlooSession& operator=(const GlooSession&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    const std::string& token() const { return token_; }
    std::chrono::milliseconds timeout() const { return timeout_; }
    std::string who() const;  // "rank 1 of 3"

    // The session of the GlooCollective being built on this thread (set by GlooGuard), or null.
    static std::shared_ptr<GlooSession> current();
    static void setCurrent(std::shared_ptr<GlooSession> session);
    // The session one of whose listening sockets `fd` is (any thread), or null.
    static std::shared_ptr<GlooSession> owning(int fd);

    void addListener(int fd, const sockaddr_storage& address);
    // From the address book: this rank's listening address for each peer, and each peer's for it.
    void ownAddress(int peer, const sockaddr_storage& address);
    void peerAddress(int peer, const sockaddr_storage& address);
    std::optional<Listener> listener(int fd) const;
    // The peer that published `to` as its listening address for this rank, or -1.
    int destination(const sockaddr_storage& to) const;

    // The connecting end of a stand-in connection given to a pair that connects out (glooacceptor.cpp).
    void keepPlaceholder(int peer, int fd);
    void dropPlaceholder(int peer);

    // A connection refused on `listener`: reported at once and kept for the error if joining fails.
    void refused(const std::string& listener, const std::string& from, const std::string& why);
    void failed(const std::string& what);  // why a connection of Gloo's failed (kept for the error)
    std::string summary() const;           // what refused() and failed() gathered, "" if nothing

    // Readable after a side becomes known or cancel(); drainWake() before waiting again.
    int wakeFd() const { return wake_; }
    void drainWake() const;
    // Ends every wait of the guarded calls (the collective is being torn down).
    void cancel();
    bool cancelled() const;

private:
    void wake() const;
    void decide(Listener& l);

    const int rank_, size_;
    const std::string token_;
    const std::chrono::milliseconds timeout_;
    const Report report_;
    int wake_ = -1;

    mutable std::mutex m_;
    std::vector<Listener> listeners_;
    std::map<int, sockaddr_storage> own_, peers_;  // by peer rank
    std::map<int, int> placeholders_;              // by peer rank: fd
    static constexpr size_t kRefusalsKept = 5, kRefusalsReported = 20;
    std::vector<std::string> refused_, failed_;  // refused_: the first kRefusalsKept
    size_t refusedCount_ = 0;
    bool cancelled_ = false;
};

}  // namespace trainbench::engine
