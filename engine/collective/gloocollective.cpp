#include "engine/collective/gloocollective.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <stdexcept>

#include "engine/collective/glooaddressbook.h"
#include "engine/collective/glooguard.h"
#include "engine/collective/gloohandshake.h"
#include "engine/rendezvous/rendezvousclient.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

// Gloo's TCP pairs write with writev(), which raises SIGPIPE when a peer has died, and SIGPIPE's
// default action ends the process before Gloo can report the broken connection. Blocking it in the
// calling thread while Gloo works turns that into an EPIPE error Gloo throws. Gloo's own event-loop
// thread, created under this guard by the constructor, inherits the blocked signal for good.
class SigpipeBlocked {
public:
    SigpipeBlocked() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~SigpipeBlocked() {
        if (sigismember(&old_, SIGPIPE)) return;  // the caller blocks it anyway: leave it as it was
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {  // one raised under the guard: discard it, do not deliver it
            const timespec now{0, 0};
            sigtimedwait(&pipe_, nullptr, &now);
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

private:
    sigset_t pipe_, old_;
};

// The Gloo device listening on the task's own address only: `hostname` resolved once, a wildcard refused.
std::shared_ptr<gloo::transport::Device> listeningDevice(const GlooTransport& transport, const std::string& who) {
    gloo::transport::tcp::attr attr;
    if (!transport.iface.empty())
        attr.iface = transport.iface;
    else
        attr.hostname = transport.hostname;
    const std::string where = transport.iface.empty() ? "host " + transport.hostname : "interface " + transport.iface;
    try {
        attr = gloo::transport::tcp::CreateDeviceAttr(attr);
    } catch (const std::exception& e) {
        throw CollectiveError(who + ": cannot listen on " + where + ": " + e.what());
    }
    if (gloohandshake::isWildcard(attr.ai_addr))
        throw CollectiveError(who + ": cannot listen on " + where + ": " + gloohandshake::addressText(attr.ai_addr) +
                              " is the wildcard address (every interface); Gloo listens only on the task's own "
                              "address, the host the cluster spec names for it");
    try {
        return std::make_shared<gloo::transport::tcp::Device>(attr);
    } catch (const std::exception& e) {
        throw CollectiveError(who + ": cannot listen on " + where + ": " + e.what());
    }
}

void sumFloats(void* out, const void* a, const void* b, size_t n) {
    float* o = static_cast<float*>(out);
    const float* x = static_cast<const float*>(a);
    const float* y = static_cast<const float*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
}

}  // namespace

struct GlooCollective::Impl {
    int rank = 0, size = 1;
    std::chrono::milliseconds timeout{0};
    std::shared_ptr<gloo::rendezvous::Context> context;
    std::string broken;  // the operation that failed ("" while the group is usable)

    std::string who() const { return "rank " + std::to_string(rank) + " of " + std::to_string(size); }

    // Runs one Gloo operation; `describe()` names it in errors (built only then: the path that
    // succeeds allocates nothing of ours).
    template <class Describe, class F>
    void run(Describe&& describe, F&& f) {
        if (!broken.empty())
            throw CollectiveError(who() + ": " + describe() + ": the group is unusable after an earlier failure (" +
                                  broken + ")");
        SigpipeBlocked guard;
        try {
            f();
        } catch (const std::exception& e) {
            broken = describe() + " failed";
            throw CollectiveError(who() + ": " + describe() + " failed (timeout " + std::to_string(timeout.count()) +
                                  " ms): " + e.what());
        }
    }
};

GlooCollective::GlooCollective(int rank, int size, const std::string& storeAddress, const std::string& token,
                               std::chrono::milliseconds timeout, const GlooTransport& transport)
    : impl_(std::make_unique<Impl>()) {
    if (size < 1 || rank < 0 || rank >= size)
        throw std::invalid_argument("GlooCollective: rank " + std::to_string(rank) + " is not in a group of " +
                                    std::to_string(size));
    if (timeout.count() <= 0) throw std::invalid_argument("GlooCollective: the timeout must be positive");
    Impl& m = *impl_;
    m.rank = rank;
    m.size = size;
    m.timeout = timeout;
    SigpipeBlocked guard;

    GlooSession::Report report = transport.report;
    if (!report) report = [](const std::string& line) { std::fprintf(stderr, "trainbench: %s\n", line.c_str()); };
    // Before Gloo's pairs (declared first, it outlives them): it checks their connections.
    GlooGuard glooGuard(rank, size, token, timeout, std::move(report));
    std::shared_ptr<gloo::transport::Device> device = listeningDevice(transport, m.who());

    // The store is needed only to meet: its connection closes when this constructor returns.
    RendezvousClient client = [&] {
        try {
            return RendezvousClient(storeAddress, token, timeout);
        } catch (const RendezvousError& e) {
            throw RendezvousError(m.who() + ": " + e.what());
        }
    }();
    gloo::rendezvous::PrefixStore prefixed(transport.keyPrefix, client);
    gloo::rendezvous::Store& store =
        transport.keyPrefix.empty() ? static_cast<gloo::rendezvous::Store&>(client) : prefixed;
    // The wait for the peers' addresses is their arrival: it gets the longer allowance, if any.
    GlooAddressBook book(store, glooGuard.session(), transport.arrivalTimeout);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);  // if joining fails: closed under the guard
    context->setTimeout(timeout);
    // What the guard saw (the peer that failed, the strangers refused), for the error.
    const auto seen = [&] {
        const std::string s = glooGuard.session().summary();
        return s.empty() ? s : "; " + s;
    };
    try {
        context->connectFullMesh(book, device);
        m.context = std::move(context);
    } catch (const RendezvousError& e) {
        glooGuard.cancel();  // before the pairs close: their destructors wait for Gloo's loop thread
        throw RendezvousError(m.who() + ": joining the group: " + e.what() + seen());
    } catch (const std::exception& e) {
        glooGuard.cancel();
        throw CollectiveError(m.who() + ": connecting to the other ranks failed: " + e.what() + seen());
    }
}

GlooCollective::~GlooCollective() {
    SigpipeBlocked guard;  // closing connections to a dead peer
    impl_->context.reset();
}

int GlooCollective::rank() const { return impl_->rank; }
int GlooCollective::size() const { return impl_->size; }

void GlooCollective::allReduceSum(float* data, size_t count) {
    if (count == 0 || impl_->size == 1) return;  // nothing to exchange: every rank returns at once alike
    const auto describe = [count] { return "allReduceSum of " + std::to_string(count) + " floats"; };
    impl_->run(describe, [&] {
        gloo::AllreduceOptions opts(impl_->context);
        opts.setOutput(data, count);
        opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
        opts.setReduceFunction(&sumFloats);
        gloo::allreduce(opts);
    });
}

void GlooCollective::broadcast(float* data, size_t count, int root) {
    if (root < 0 || root >= impl_->size)
        throw std::invalid_argument("GlooCollective::broadcast: root " + std::to_string(root) +
                                    " is not in a group of " + std::to_string(impl_->size));
    if (count == 0 || impl_->size == 1) return;
    const auto describe = [=] {
        return "broadcast of " + std::to_string(count) + " floats from rank " + std::to_string(root);
    };
    impl_->run(describe, [&] {
        gloo::BroadcastOptions opts(impl_->context);
        opts.setOutput(data, count);
        opts.setRoot(root);
        gloo::broadcast(opts);
    });
}

void GlooCollective::barrier() {
    if (impl_->size == 1) return;
    impl_->run([] { return std::string("barrier"); }, [&] {
        gloo::BarrierOptions opts(impl_->context);
        gloo::barrier(opts);
    });
}

}  // namespace trainbench::engine
