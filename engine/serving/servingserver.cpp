#include "engine/serving/servingserver.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/net/asioserver.h"
#include "engine/serving/descriptorlimit.h"
#include "engine/serving/httpconnection.h"
#include "engine/serving/servingcontext.h"

namespace trainbench::engine::serving {

namespace {
// Descriptors kept back from connections: the model, the run store, logs, the batch threads' files.
constexpr int64_t kReservedDescriptors = 256;

ServingOptions resolve(const Servable& servable, ServingOptions o) {
    if (servable.name.empty() || !servable.newInstance || servable.outputs < 1 || servable.exampleSize() < 1)
        throw std::invalid_argument("the servable needs a name, an instance factory, outputs ≥ 1 and a non-empty input shape");
    o.batching = o.batching.resolved();
    if (std::string e = o.batching.validate(); !e.empty()) throw std::invalid_argument("batching: " + e);
    if (std::string e = o.limits.validate(); !e.empty()) throw std::invalid_argument("limits: " + e);
    if (o.instances == 0) o.instances = o.batching.num_batch_threads;
    if (o.instances < 1 || o.instances > o.batching.num_batch_threads)
        throw std::invalid_argument("instances is " + std::to_string(o.instances) + ", expected 1 to num_batch_threads (" +
                                    std::to_string(o.batching.num_batch_threads) + "): each instance runs on a batch thread");
    if (o.request_threads == 0) o.request_threads = std::max(1u, std::thread::hardware_concurrency());
    if (o.request_threads < 0 || o.request_threads > 1024)
        throw std::invalid_argument("request_threads is " + std::to_string(o.request_threads) + ", expected 0 to 1024");
    return o;
}
}  // namespace

struct ServingServer::Impl {
    Impl(Servable servable, const ServingOptions& options) : ctx(servable, resolve(servable, options)) {}
    void note(std::string line) {
        std::lock_guard lock(notesMutex);
        notes.push_back(std::move(line));
    }
    ServingContext ctx;
    std::unique_ptr<AsioServer> server;  // destroyed before ctx, whose parts its connections use
    std::mutex notesMutex;               // the io thread adds PendingLimit's reports
    std::vector<std::string> notes;
    bool stopped = false;
};

ServingServer::ServingServer(Servable servable, ServingOptions options)
    : impl_(std::make_unique<Impl>(std::move(servable), options)) {
    ServingContext& ctx = impl_->ctx;
    ctx.scheduler = std::make_unique<BatchScheduler>(
        ctx.servable, ctx.options.batching, ctx.options.instances,
        [&metrics = ctx.metrics](int64_t examples, int64_t padded, int64_t computeMicros) {
            metrics.observeBatch(examples, padded, computeMicros);
        });
}

ServingServer::~ServingServer() { stop(); }

void ServingServer::start() {
    ServingContext& ctx = impl_->ctx;
    const DescriptorLimit fds = raiseDescriptorLimit();
    if (fds.after != fds.before)
        impl_->note("raised the descriptor limit from " + std::to_string(fds.before) + " to " +
                               std::to_string(fds.after));
    const int64_t room = static_cast<int64_t>(std::min<uint64_t>(fds.after, 1u << 30)) - kReservedDescriptors;
    if (ctx.options.limits.max_connections > room) {
        ctx.options.limits.max_connections = std::max<int64_t>(1, room);
        impl_->note("max_connections lowered to " + std::to_string(ctx.options.limits.max_connections) +
                               ": the descriptor limit is " + std::to_string(fds.after));
    }
    impl_->server = std::make_unique<AsioServer>(
        ctx.options.auth_token, ctx.options.limits.header_timeout,
        [this](const std::string& line) { impl_->note("connections: " + line); },
        static_cast<size_t>(ctx.options.limits.max_connections));
    const std::string error = impl_->server->listen(ctx.options.bind_address, ctx.options.port);
    if (!error.empty())
        throw std::runtime_error("cannot listen on " + ctx.options.bind_address + ":" + std::to_string(ctx.options.port) +
                                 ": " + error);
    AsioServer& server = *impl_->server;
    impl_->server->start([&server, &ctx](AsioServer::Socket socket, PendingLimit::Ticket ticket) {
        if (ctx.metrics.connectionsOpen.load() >= ctx.options.limits.max_connections) {
            ++ctx.metrics.connectionsRefused;
            boost::system::error_code ignored;
            socket.close(ignored);
            return;
        }
        HttpConnection::open(server, std::move(socket), std::move(ticket), ctx);
    });
}

// The request threads first (what they hold is decoded and scheduled, or refused), then the
// scheduler (what is queued is answered 503), then the io thread with every connection.
void ServingServer::stop() {
    if (impl_->stopped) return;
    impl_->stopped = true;
    impl_->ctx.requests.close();
    impl_->ctx.scheduler->stop();
    if (impl_->server) impl_->server->stop();
}

uint16_t ServingServer::port() const { return impl_->server ? impl_->server->port() : 0; }
std::string ServingServer::address() const { return impl_->server ? impl_->server->address() : std::string(); }
const ServingOptions& ServingServer::options() const { return impl_->ctx.options; }
std::vector<std::string> ServingServer::notes() const {
    std::lock_guard lock(impl_->notesMutex);
    return impl_->notes;
}
const ServingMetrics& ServingServer::metrics() const { return impl_->ctx.metrics; }
int64_t ServingServer::enqueuedBatches() const { return impl_->ctx.scheduler->enqueuedBatches(); }

std::string ServingServer::metricsText() const {
    return impl_->ctx.metrics.prometheusText(impl_->ctx.scheduler->enqueuedBatches(), impl_->ctx.scheduler->enqueuedTasks());
}

}  // namespace trainbench::engine::serving
