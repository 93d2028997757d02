#pragma once
// The one scaffold under every server of a job — the rendezvous store, a parameter server, the
// coordinator, and the inference server to come: a listening socket (loopback unless a cluster spec
// says otherwise), the accept loop with its cap on connections waiting for their Hello
// (PendingLimit: one over the cap is closed before anything is allocated for it), the job's token
// that a Hello must present, an io thread of its own, periodic checks on it, and stop(), which
// wakes and joins that thread and closes every connection. What is said on a connection is the
// protocol's: it subclasses AsioConnection (asioconnection.h), made by the function given to start().
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "engine/net/pendinglimit.h"

namespace trainbench::engine {

class AsioServer {
public:
    using Socket = boost::asio::ip::tcp::socket;
    // Takes an accepted connection and its place among those waiting for their Hello (io thread).
    using OnConnection = std::function<void(Socket, PendingLimit::Ticket)>;
    struct Hooks {
        std::function<void()> onThreadStart;  // first thing on the io thread (a compute-thread budget, say)
        // A handler threw past its connection (out of memory): the io thread ends after this.
        std::function<void(const std::string& what)> onFailure;
        // In stop(), once no handler runs any more and before the connections are destroyed: drop
        // the references to connections kept outside the io thread's handlers.
        std::function<void()> onHalted;
    };

    // `token`: the job's, which every Hello must present (isJobToken); `helloTimeout`: how long a
    // connection may take to say it; `pendingReport` gets PendingLimit's lines (the caller adds
    // the server's name); `maxPending`: PendingLimit's cap (a job's servers keep its default; the
    // inference server, whose clients are many, sets its own).
    AsioServer(std::string token, std::chrono::milliseconds helloTimeout,
               std::function<void(const std::string&)> pendingReport,
               size_t maxPending = PendingLimit::kMaxPendingConnections);
    ~AsioServer();  // stop()
    AsioServer(const AsioServer&) = delete;
    AsioServer& operator=(const AsioServer&) = delete;

    // Opens host:port (a literal address or a host name resolved once; port 0: any free one).
    // Returns "" on success, otherwise why not ("cannot resolve the host: ...", "Address already
    // in use"), for the caller's own error.
    std::string listen(const std::string& host, uint16_t port);
    // Calls `tick` on the io thread every `period` for as long as it returns true.
    void every(std::chrono::milliseconds period, std::function<bool()> tick);
    // Accepts connections, each handed to `onConnection` on the io thread, and runs that thread.
    void start(OnConnection onConnection, Hooks hooks = {});
    // Wakes the io thread and joins it; then every connection is closed (with the pending
    // handlers that hold it) and the listening socket too. Peers see their connection drop.
    // Idempotent; the destructor calls it.
    void stop();

    boost::asio::io_context& io() { return *io_; }  // until stop(): for posting to the io thread
    uint16_t port() const { return port_; }
    std::string address() const;  // host:port as listen() was given the host ("[::1]:80" for IPv6)
    bool isJobToken(std::string_view presented) const;
    std::chrono::milliseconds helloTimeout() const { return helloTimeout_; }

    // A connection closed for a bad token, a missing Hello or a protocol error.
    void countRejected() { ++rejected_; }
    // Those, and those PendingLimit turned away. Any thread.
    int64_t rejectedConnections() const { return rejected_.load() + pending_.turnedAway(); }
    int64_t pendingConnections() const { return static_cast<int64_t>(pending_.pending()); }

private:
    void accept();
    void tickAfter(boost::asio::steady_timer& timer, std::chrono::milliseconds period, std::function<bool()> tick);

    const std::string token_;
    const std::chrono::milliseconds helloTimeout_;
    PendingLimit pending_;  // outlives io_, whose pending handlers hold tickets
    std::atomic<int64_t> rejected_{0};
    std::string host_;
    uint16_t port_ = 0;
    OnConnection onConnection_;
    std::optional<boost::asio::io_context> io_;
    std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
    std::optional<boost::asio::steady_timer> acceptRetry_;
    std::list<boost::asio::steady_timer> ticks_;  // every()'s
    std::function<void()> onHalted_;
    std::thread thread_;
};

// The peer of a connected socket as host:port ("[::1]:80" for IPv6), for reports and errors.
std::string peerAddress(const boost::asio::ip::tcp::socket& socket);

}  // namespace trainbench::engine
