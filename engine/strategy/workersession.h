#pragma once
// The coordinator's connection to one worker of a parameter_server job (PsCoordinator), on the
// coordinator's AsioServer: the worker's Hello (the job's token, the worker role) is answered with
// Welcome and the job's layout; then its Result, Heartbeat, PsLost and Error messages go to the
// coordinator, and the coordinator's Tasks, Heartbeats and Shutdown to it. A worker silent for the
// job's timeout is cut off (it sends a Heartbeat while it computes).
// Included by .cpp files only: Asio stays out of the engine's public headers.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/net/framedconnection.h"
#include "engine/strategy/psprotocol.h"

namespace trainbench::engine {

class WorkerSession;

// What a session tells the coordinator, on the io thread.
class WorkerSessionOwner {
public:
    // A connection closed before its Hello was accepted: counted and said.
    virtual void refused(const std::string& what) = 0;
    virtual void joined(const std::shared_ptr<WorkerSession>& session) = 0;
    // The worker is gone (its connection is closed or closing): its step goes to another.
    virtual void lost(WorkerSession& session, const std::string& why) = 0;
    // The worker sent nothing for the timeout.
    virtual void silent(WorkerSession& session) = 0;
    // The worker said it cannot go on (an Error message).
    virtual void workerFailed(WorkerSession& session, const std::string& why) = 0;
    virtual void serverLost(WorkerSession& session, const ps::PsLost& message) = 0;
    virtual void result(WorkerSession& session, const ps::Result& result) = 0;

protected:
    ~WorkerSessionOwner() = default;
};

class WorkerSession : public FramedConnection {
public:
    // `layoutFrame`: the JobLayout message every worker gets after Welcome; `timeout`: how long an
    // admitted worker may be silent.
    WorkerSession(AsioServer& server, AsioServer::Socket socket, PendingLimit::Ticket ticket, WorkerSessionOwner& owner,
                  uint64_t id, std::shared_ptr<const std::string> layoutFrame, std::chrono::milliseconds timeout);

    void start() { startReading(); }
    // Says why (if `why` is not empty) and closes once that is written.
    void refuse(const std::string& why);
    // Sends this frame last and closes once it is out.
    void endWith(Bytes frame) { sendThenClose(std::move(frame)); }
    void write(Bytes frame) { send(std::move(frame)); }

    int worker() const { return worker_; }
    uint64_t id() const { return id_; }
    std::optional<int64_t> step;  // the step it runs (guarded by the coordinator's mutex)

private:
    void onFrame(const framing::Frame& f) override;
    void onStreamEnd(const boost::system::error_code& ec) override;
    void onBadStream(const std::exception& e) override;
    void onHelloTimeout() override;
    void onSilent() override { owner_.silent(*this); }
    void onWriteFailed(const boost::system::error_code& ec) override;
    void hello(const framing::Frame& f);

    WorkerSessionOwner& owner_;
    const uint64_t id_;
    const std::shared_ptr<const std::string> layoutFrame_;
    const std::chrono::milliseconds timeout_;
    int worker_ = -1;
};

}  // namespace trainbench::engine
