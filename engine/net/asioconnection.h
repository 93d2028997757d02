#pragma once
// One connection an AsioServer accepted, whatever its protocol: its socket and the peer's address
// (for every report about it), its place among the connections waiting for their Hello (a newer
// connection may take that place, closing this one, until admit()), the Hello deadline and, once
// admitted, an optional silence deadline (a peer heard from less often is cut off), and writes that
// go out one after another in the order they were sent. The protocol subclasses it: it reads from
// socket(), checks the Hello's token (presentsJobToken), answers with send() and says what a
// deadline or a failed write means through the virtual functions. Used on the io thread only,
// except closed(), which any thread may read.
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "engine/net/asioserver.h"

namespace trainbench::engine {

class AsioConnection : public std::enable_shared_from_this<AsioConnection> {
public:
    using Clock = std::chrono::steady_clock;
    using Bytes = std::shared_ptr<const std::string>;

    virtual ~AsioConnection() = default;
    AsioConnection(const AsioConnection&) = delete;
    AsioConnection& operator=(const AsioConnection&) = delete;

    const std::string& peer() const { return peer_; }
    bool closed() const { return closed_.load(); }
    bool closing() const { return closeAfterWrites_; }  // sendThenClose() was called: nothing more is read
    bool admitted() const { return admitted_; }
    bool writing() const { return !writes_.empty(); }  // sent bytes not all written yet
    Clock::time_point lastWritten() const { return lastWritten_; }
    // Shuts the connection down and closes its socket; then onClosed(), once.
    void close();

protected:
    AsioConnection(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket);
    // Call once, first: the place among the waiting connections can be taken from now on, and the
    // Hello deadline runs. Then the protocol starts reading.
    void startConnection();
    bool presentsJobToken(std::string_view token) const { return server_.isJobToken(token); }
    // The peer said Hello with the job's token: its place among the waiting connections is given
    // back and the Hello deadline is off. A nonzero `silence`: a peer that sends nothing for that
    // long from now on gets onSilent() (heard() on every read pushes it back).
    void admit(std::chrono::milliseconds silence = std::chrono::milliseconds(0));
    void heard() { lastHeard_ = Clock::now(); }

    // Queues bytes to write after those sent before.
    void send(Bytes bytes);
    void send(std::string bytes) { send(std::make_shared<const std::string>(std::move(bytes))); }
    // The last bytes: the connection closes once they are written.
    void sendThenClose(std::string bytes);
    void sendThenClose(Bytes bytes);

    AsioServer::Socket& socket() { return socket_; }
    AsioServer& server() { return server_; }
    template <class T>
    std::shared_ptr<T> self() {
        return std::static_pointer_cast<T>(shared_from_this());
    }

    // No Hello with the token within the server's Hello timeout (open, not closing, not admitted).
    virtual void onHelloTimeout() = 0;
    // Admitted, and silent for admit()'s `silence` (open). Called once.
    virtual void onSilent() {}
    // A write failed (the connection is still open): closes it unless overridden.
    virtual void onWriteFailed(const boost::system::error_code&) { close(); }
    // Everything sent is written and the connection stays open.
    virtual void onSent() {}
    virtual void onClosed() {}

private:
    void armDeadline(Clock::time_point at);
    void onDeadline();
    void writeNext();

    AsioServer& server_;
    AsioServer::Socket socket_;
    std::string peer_;
    PendingLimit::Ticket ticket_;  // its place among the connections waiting for their Hello
    boost::asio::steady_timer deadline_;
    uint64_t deadlineGeneration_ = 0;  // a deadline handler already queued when it was moved is stale
    bool admitted_ = false;
    std::chrono::milliseconds silence_{0};
    Clock::time_point lastHeard_ = Clock::now();
    Clock::time_point lastWritten_ = Clock::now();
    std::deque<Bytes> writes_;  // the front one is being written
    bool closeAfterWrites_ = false;
    std::atomic<bool> closed_{false};
};

}  // namespace trainbench::engine
