#include "engine/rendezvous/rendezvousclient.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <stdexcept>

#include "engine/net/asioclient.h"
#include "engine/net/hostport.h"
#include "engine/rendezvous/rendezvousmessages.h"
#include "engine/rendezvous/rendezvouswire.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using namespace rendezvouswire;

// Replies carry at most a value a client set, which the server capped at kDefaultMaxPayload (and
// RendezvousClient::set refuses to send more): a header that claims more is not from our store, and is
// refused before anything is allocated for it.
constexpr uint32_t kMaxReplyBytes = kDefaultMaxPayload;
// The server answers a Wait when its timeout expires; the reply may take this much longer to arrive.
constexpr std::chrono::milliseconds kWaitReplyGrace{2000};

std::string quoted(const std::vector<std::string>& keys) {
    std::string s;
    for (const std::string& k : keys) s += (s.empty() ? "'" : ", '") + k + "'";
    return s;
}

std::string millis(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

struct Reply {
    MessageType type;
    std::vector<uint8_t> payload;
};

}  // namespace

struct RendezvousClient::Impl {
    asio::io_context io{1};
    tcp::socket socket{io};
    std::string where;
    std::chrono::milliseconds timeout;
    std::string broken;  // why the connection cannot be used any more ("" while it can)

    [[noreturn]] void fail(const std::string& what) {
        broken = what;
        error_code ignored;
        socket.close(ignored);
        throw RendezvousError("rendezvous store " + where + ": " + what);
    }

    // Sends one request and returns the reply, which must come within `budget`. An Error reply, a
    // broken connection or a late reply throw (and leave the connection unusable).
    Reply request(MessageType type, const std::string& payload, std::chrono::milliseconds budget,
                  const std::string& what) {
        const std::string prefix = "rendezvous store " + where + ": " + what + ": ";
        if (!broken.empty())
            throw RendezvousError(prefix + "the connection is unusable after an earlier error (" + broken + ")");
        if (payload.size() > kDefaultMaxPayload)
            throw RendezvousError(prefix + "message of " + std::to_string(payload.size()) +
                                  " bytes exceeds the store's cap of " + std::to_string(kDefaultMaxPayload));
        const auto deadline = Clock::now() + budget;
        const std::string message = frame(type, payload);
        std::array<uint8_t, kHeaderBytes> header{};
        error_code ec;
        asio::async_write(socket, asio::buffer(message), [&](error_code e, size_t) {
            ec = e;
            if (!e) asio::async_read(socket, asio::buffer(header), [&](error_code r, size_t) { ec = r; });
        });
        if (!runUntil(io, socket, deadline)) fail("no reply to " + what + " within " + millis(budget));
        if (ec) fail("connection lost during " + what + ": " + ec.message());
        Header h;
        const std::string problem = checkHeader(header.data(), kMaxReplyBytes, &h);
        if (!problem.empty()) fail("bad reply to " + what + ": " + problem);
        Reply reply{static_cast<MessageType>(h.type), std::vector<uint8_t>(h.length)};
        asio::async_read(socket, asio::buffer(reply.payload), [&](error_code e, size_t) { ec = e; });
        if (!runUntil(io, socket, deadline)) fail("no reply to " + what + " within " + millis(budget));
        if (ec) fail("connection lost during " + what + ": " + ec.message());
        if (reply.type == MessageType::Error) {
            std::string why;
            if (!decodeErrorMessage(reply.payload.data(), reply.payload.size(), &why)) why = "(unreadable reason)";
            fail("refused " + what + ": " + why);
        }
        return reply;
    }

    // A reply of a type the request does not allow breaks the protocol.
    void expect(const Reply& reply, std::initializer_list<MessageType> allowed, const std::string& what) {
        for (MessageType t : allowed)
            if (reply.type == t) return;
        fail(std::string("unexpected ") + messageTypeName(static_cast<uint16_t>(reply.type)) + " reply to " + what);
    }
};

namespace {

void checkKey(const std::string& key) {
    if (key.size() > kMaxKeyBytes)
        throw std::invalid_argument("RendezvousClient: key of " + std::to_string(key.size()) + " bytes (at most " +
                                    std::to_string(kMaxKeyBytes) + ")");
}

}  // namespace

RendezvousClient::RendezvousClient(const std::string& address, const std::string& token, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
    const net::HostPort hp = net::parseHostPort(address);
    impl_->where = net::formatHostPort(hp.host, hp.port);
    impl_->timeout = timeout;
    const auto start = Clock::now();
    // The chief may not listen yet: connectWithin() retries refused connections.
    if (const std::string why = connectWithin(impl_->io, impl_->socket, hp.host, hp.port, timeout,
                                              "is the chief running and is this its address?");
        !why.empty())
        impl_->fail(why);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(start + timeout - Clock::now());
    const Reply r = impl_->request(MessageType::Hello, PayloadWriter().str(token).data(),
                                   std::max(left, std::chrono::milliseconds(1)), "Hello");
    impl_->expect(r, {MessageType::Ok}, "Hello");
}

RendezvousClient::~RendezvousClient() = default;

const std::string& RendezvousClient::address() const { return impl_->where; }

void RendezvousClient::set(const std::string& key, const std::vector<char>& data) {
    checkKey(key);
    PayloadWriter w;
    w.str(key).bytes(data.data(), data.size());
    const std::string what = "Set of key '" + key + "'";
    impl_->expect(impl_->request(MessageType::Set, w.data(), impl_->timeout, what), {MessageType::Ok}, what);
}

std::vector<char> RendezvousClient::get(const std::string& key) {
    wait({key}, impl_->timeout);
    const std::string what = "Get of key '" + key + "'";
    const Reply r = impl_->request(MessageType::Get, PayloadWriter().str(key).data(), impl_->timeout, what);
    impl_->expect(r, {MessageType::Ok, MessageType::NotFound}, what);
    if (r.type == MessageType::NotFound)
        throw RendezvousError("rendezvous store " + impl_->where + ": key '" + key + "' not found");
    return std::vector<char>(r.payload.begin(), r.payload.end());
}

void RendezvousClient::wait(const std::vector<std::string>& keys) { wait(keys, impl_->timeout); }

void RendezvousClient::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
    const std::chrono::milliseconds t = timeout.count() > 0 ? timeout : impl_->timeout;
    PayloadWriter w;
    w.u32(static_cast<uint32_t>(std::min<int64_t>(t.count(), UINT32_MAX))).u32(static_cast<uint32_t>(keys.size()));
    for (const std::string& k : keys) {
        checkKey(k);
        w.str(k);
    }
    const std::string what = "Wait for key(s) " + quoted(keys);
    const Reply r = impl_->request(MessageType::Wait, w.data(), t + kWaitReplyGrace, what);
    impl_->expect(r, {MessageType::Ok, MessageType::TimedOut}, what);
    if (r.type == MessageType::Ok) return;
    std::vector<std::string> missing;
    if (!decodeKeyList(r.payload.data(), r.payload.size(), &missing))
        impl_->fail("malformed TimedOut reply to Wait for key(s) " + quoted(keys));
    throw RendezvousError("rendezvous store " + impl_->where + ": timed out after " + millis(t) +
                          " waiting for key(s) " + quoted(missing.empty() ? keys : missing) +
                          " (the ranks that publish them have not arrived: not started, crashed, or given another"
                          " address or token)");
}

}  // namespace trainbench::engine
