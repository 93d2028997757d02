#include "bench/servingbench.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/inference/graphservable.h"
#include "app/loadtest/requestset.h"
#include "bench/benchutil.h"
#include "bench/workloads.h"
#include "engine/serving/descriptorlimit.h"
#include "engine/serving/servingserver.h"
#include "tests/engine/serving/denseservable.h"

namespace trainbench::bench {

namespace {
namespace serving = engine::serving;

int connectLoopback(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// One kept-alive connection, one request at a time; the status of each answer (0: none).
class Client {
public:
    explicit Client(uint16_t port) : fd_(connectLoopback(port)) {
        timeval tv{10, 0};  // a server that does not answer ends the benchmark, not hangs it
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~Client() { ::close(fd_); }
    // The status of the answer to a whole HTTP request (0: none).
    int send(const std::string& req) {
        if (::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return 0;
        std::string in;
        char buf[4096];
        for (;;) {
            const size_t end = in.find("\r\n\r\n");
            if (end != std::string::npos) {
                const size_t cl = in.find("Content-Length: ");
                const size_t need = end + 4 + (cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16)));
                if (in.size() >= need) return std::stoi(in.substr(9, 3));
            }
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return 0;
            in.append(buf, static_cast<size_t>(n));
        }
    }

private:
    int fd_;
};

// A batch-1 predict request for the dense servable.
const std::string kDenseRequest = [] {
    const std::string body = R"({"instances": [[1, 2, 3, 4]]})";
    return "POST /v1/models/dense:predict HTTP/1.1\r\nHost: b\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}();

struct LoadSide {
    double qps = 0, p50 = 0, p99 = 0, meanBatch = 0;
    int failed = 0;
};

LoadSide closedLoop(const ServingBenchOptions& o, int64_t maxBatch) {
    serving::ServingOptions so;
    so.batching.max_batch_size = maxBatch;
    so.batching.num_batch_threads = 1;
    so.batching.max_enqueued_batches = 1000;  // closed loop: never refuse, measure
    so.request_threads = 1;
    serving::ServingServer server(serving::test::denseServable({4}, 3, {o.overhead, o.perExample}), so);
    server.start();
    std::vector<std::vector<double>> latencies(static_cast<size_t>(o.clients));
    std::atomic<int> failed{0};
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (int c = 0; c < o.clients; ++c)
        threads.emplace_back([&, c] {
            Client client(server.port());
            while (Clock::now() < end) {
                const auto s = Clock::now();
                if (client.send(kDenseRequest) != 200) ++failed;
                latencies[static_cast<size_t>(c)].push_back(secondsSince(s) * 1e3);
            }
        });
    for (auto& t : threads) t.join();
    const double wall = secondsSince(t0);
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    const auto& sizes = server.metrics().batchSizes();
    return {static_cast<double>(all.size()) / wall, percentile(all, 0.5), percentile(all, 0.99),
            sizes.count() ? sizes.sum() / static_cast<double>(sizes.count()) : 0, failed.load()};
}

// Request i is request(i).
std::vector<double> timeRequests(uint16_t port, int n, int& failed, const std::function<const std::string&(int)>& request) {
    std::vector<double> ms;
    Client client(port);
    for (int i = 0; i < n; ++i) {
        const std::string& req = request(i);
        const auto s = Clock::now();
        if (client.send(req) != 200) ++failed;
        ms.push_back(secondsSince(s) * 1e3);
    }
    return ms;
}
}  // namespace

int servingBatchingBench(const ServingBenchOptions& o) {
    std::printf("serving-batching: %d closed-loop clients, batch-1 requests, dense servable (per call %lld, per example %lld iterations), "
                "num_batch_threads 1, batch_timeout_micros 0, %g s per side, %d rounds\n",
                o.clients, static_cast<long long>(o.overhead), static_cast<long long>(o.perExample), o.seconds, o.rounds);
    std::vector<double> qps[2], p50[2], p99[2], batch[2];
    int failed = 0;
    for (int r = 0; r < o.rounds; ++r)
        for (int side = 0; side < 2; ++side) {
            const LoadSide s = closedLoop(o, side == 0 ? 1 : o.maxBatch);
            qps[side].push_back(s.qps);
            p50[side].push_back(s.p50);
            p99[side].push_back(s.p99);
            batch[side].push_back(s.meanBatch);
            failed += s.failed;
        }
    std::printf("%-22s %12s %10s %10s %11s\n", "side", "requests/s", "p50 ms", "p99 ms", "mean batch");
    for (int side = 0; side < 2; ++side)
        std::printf("%-22s %12.0f %10.2f %10.2f %11.1f\n",
                    side == 0 ? "max_batch_size 1" : ("max_batch_size " + std::to_string(o.maxBatch)).c_str(),
                    median(qps[side]), median(p50[side]), median(p99[side]), median(batch[side]));
    std::printf("batching / no batching: %.2fx requests/s (medians of %d rounds); failed requests: %d\n",
                median(qps[1]) / std::max(1e-9, median(qps[0])), o.rounds, failed);
    return failed == 0 ? 0 : 1;
}

int servingIdleBench(const ServingBenchOptions& o) {
    int ready[2], hold[2];
    if (::pipe(ready) != 0 || ::pipe(hold) != 0) return 1;
    // The child holds the idle connections: forked before the server's threads exist.
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(ready[0]);
        ::close(hold[1]);
        serving::raiseDescriptorLimit();
        uint16_t port = 0;
        if (::read(hold[0], &port, sizeof port) != sizeof port) ::_exit(1);
        int opened = 0;
        std::vector<int> fds(static_cast<size_t>(o.idle), -1);
        for (int i = 0; i < o.idle; ++i)
            if ((fds[static_cast<size_t>(i)] = connectLoopback(port)) >= 0) ++opened;
        (void)!::write(ready[1], &opened, sizeof opened);
        char c;
        (void)!::read(hold[0], &c, 1);  // until the parent closes the pipe
        ::_exit(0);
    }
    ::close(ready[1]);
    ::close(hold[0]);
    serving::ServingOptions so;
    so.limits.header_timeout = std::chrono::seconds(120);  // hold the idle ones for the whole measurement
    so.limits.max_connections = o.idle + 1000;
    // The dense servable, or W1/W2 on Fashion-MNIST test images (a different image each request).
    const bool dense = o.model == "dense";
    serving::ServingServer server(dense ? serving::test::denseServable()
                                        : app::graphServable(workloadGraph(o.model), {.name = o.model}),
                                  so);
    server.start();
    for (const std::string& note : server.notes()) std::printf("server: %s\n", note.c_str());
    std::optional<app::loadtest::RequestSet> images;
    if (!dense) {
        app::loadtest::PredictTarget target;
        target.port = server.port();
        target.model = o.model;
        images.emplace(testImages(o.data, 1000), target, 1, 1000, 1);
    }
    const std::function<const std::string&(int)> request = [&](int i) -> const std::string& {
        return dense ? kDenseRequest : images->request(i);
    };
    int failed = 0;
    timeRequests(server.port(), 50, failed, request);  // warm-up
    const std::vector<double> before = timeRequests(server.port(), o.requests, failed, request);
    const uint16_t port = server.port();
    (void)!::write(hold[1], &port, sizeof port);
    int opened = 0;
    (void)!::read(ready[0], &opened, sizeof opened);
    const auto waitUntil = Clock::now() + std::chrono::seconds(30);
    while (server.metrics().connectionsOpen.load() < opened && Clock::now() < waitUntil)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t open = server.metrics().connectionsOpen.load();
    const std::vector<double> during = timeRequests(server.port(), o.requests, failed, request);
    const int64_t openAfter = server.metrics().connectionsOpen.load();
    ::close(hold[1]);
    ::waitpid(child, nullptr, 0);
    std::printf("serving-idle: %s, %d batch-1 requests on one kept-alive connection, without and with idle connections "
                "(%d opened by a child process, %lld open at the server when timing began, %lld when it ended)\n",
                dense ? "dense servable" : (o.model + " (graphServable, Fashion-MNIST test images)").c_str(), o.requests, opened, static_cast<long long>(open), static_cast<long long>(openAfter));
    std::printf("%-26s %10s %10s %10s\n", "side", "p50 ms", "p99 ms", "max ms");
    std::printf("%-26s %10.3f %10.3f %10.3f\n", "no idle connections", percentile(before, 0.5), percentile(before, 0.99),
                percentile(before, 1.0));
    std::printf("%-26s %10.3f %10.3f %10.3f\n", (std::to_string(opened) + " idle connections").c_str(),
                percentile(during, 0.5), percentile(during, 0.99), percentile(during, 1.0));
    std::printf("failed requests: %d\n", failed);
    return failed == 0 && opened == o.idle ? 0 : 1;
}

}  // namespace trainbench::bench
