// Storage: presets, config checks, listing, open errors, reads and request counting, and the
// emulation itself. Its arithmetic (bandwidths, latencies, overlap, making up late wake-ups) is
// checked exactly on a virtual clock; one case checks that real sleeps charge and overlap.
#include "engine/data/storage/storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <condition_variable>
#include <mutex>
#include <set>
#include <utility>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using test::errorOf;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + i / 251);
    return s;
}

class StorageTest : public test::TempDirTest {
protected:
    std::string makeFile(const std::string& name, size_t bytes) {
        test::writeText(dir_ / name, pattern(bytes));
        return path(name);
    }
};

using StorageTimingTest = StorageTest;

// Reads all of `file` in reads of `chunk` bytes; returns the bytes read.
size_t drain(StorageFile& file, size_t chunk) {
    std::vector<char> buf(chunk);
    size_t total = 0;
    while (const size_t got = file.read(buf.data(), buf.size())) total += got;
    return total;
}

TEST(Storage, PresetsAndNames) {
    EXPECT_EQ(storagePresetNames(), (std::vector<std::string>{"local", "ssd", "hdd", "cloud"}));
    for (const std::string& name : storagePresetNames()) EXPECT_EQ(storagePreset(name).preset, name);
    const StorageConfig local = storagePreset("local");
    EXPECT_FALSE(Storage(local).emulated());
    const StorageConfig cloud = storagePreset("cloud");
    EXPECT_EQ(cloud.bandwidth_mb_s, 1000.0);
    EXPECT_EQ(cloud.stream_bandwidth_mb_s, 100.0);
    EXPECT_EQ(cloud.open_latency_ms, 20.0);
    EXPECT_EQ(cloud.request_latency_ms, 10.0);
    EXPECT_EQ(cloud.request_bytes, 8 << 20);
    EXPECT_EQ(storagePreset("hdd").open_latency_ms, 8.0);
    for (const char* name : {"ssd", "hdd", "cloud"}) EXPECT_TRUE(Storage(storagePreset(name)).emulated()) << name;
    try {
        storagePreset("tape");
        ADD_FAILURE() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown storage preset 'tape' (known: local, ssd, hdd, cloud)");
    }
}

TEST(Storage, BadConfigValuesAreRejected) {
    const double bad[] = {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
    for (double v : bad) {
        for (double StorageConfig::*field : {&StorageConfig::bandwidth_mb_s, &StorageConfig::stream_bandwidth_mb_s,
                                             &StorageConfig::open_latency_ms, &StorageConfig::request_latency_ms}) {
            StorageConfig c;
            c.*field = v;
            EXPECT_THROW(Storage{c}, std::invalid_argument) << v;
        }
    }
    StorageConfig c;
    c.request_bytes = -1;
    EXPECT_THROW(Storage{c}, std::invalid_argument);
}

TEST(Storage, EmulatedOnlyWhenSomethingCosts) {
    StorageConfig c;
    c.request_bytes = 4096;  // splitting alone costs nothing
    EXPECT_FALSE(Storage(c).emulated());
    c.request_latency_ms = 0.5;
    EXPECT_TRUE(Storage(c).emulated());
}

TEST_F(StorageTest, OpenErrorsNameThePath) {
    Storage storage;
    EXPECT_EQ(errorOf([&] { storage.open(path("missing.bin")); }),
              path("missing.bin") + ": cannot open: No such file or directory");
    EXPECT_EQ(errorOf([&] { storage.open(dir_.string()); }), dir_.string() + ": is a directory, not a file");
    const std::string locked = makeFile("locked.bin", 10);
    fs::permissions(locked, fs::perms::none);
    if (::geteuid() != 0) {  // root reads it anyway
        EXPECT_EQ(errorOf([&] { storage.open(locked); }), locked + ": cannot open: Permission denied");
    }
    EXPECT_EQ(storage.stats().opens, 0) << "failed opens are not counted";
}

TEST_F(StorageTest, ListFolderGlobFileAndNothing) {
    Storage storage;
    makeFile("b.rec", 1);
    makeFile("a.rec", 1);
    makeFile("notes.txt", 1);
    fs::create_directories(dir_ / "sub");
    makeFile("sub/c.rec", 1);
    fs::create_symlink(dir_ / "gone.rec", dir_ / "z-dangling.rec");
    EXPECT_EQ(storage.list(dir_.string()), (std::vector<std::string>{path("a.rec"), path("b.rec"), path("notes.txt")}));
    EXPECT_EQ(storage.list(path("*.rec")), (std::vector<std::string>{path("a.rec"), path("b.rec")}));
    EXPECT_EQ(storage.list(path("[ab].rec")), (std::vector<std::string>{path("a.rec"), path("b.rec")}));
    EXPECT_EQ(storage.list(path("*")), (std::vector<std::string>{path("a.rec"), path("b.rec"), path("notes.txt")}));
    EXPECT_EQ(storage.list(path("b.rec")), (std::vector<std::string>{path("b.rec")}));
    for (const std::string& none : {path("nope"), path("*.tfrecord"), path("sub/*.txt"), path("z-dangling.rec")})
        EXPECT_EQ(errorOf([&] { storage.list(none); }), none + ": no files match");
    fs::remove(dir_ / "sub" / "c.rec");
    EXPECT_EQ(errorOf([&] { storage.list(path("sub")); }), path("sub") + ": no files match");
    // A dangling link is skipped, whichever entry it is (it used to fail the listing when last).
    fs::create_symlink(dir_ / "gone.rec", dir_ / "sub" / "dangling.rec");
    EXPECT_EQ(errorOf([&] { storage.list(path("sub")); }), path("sub") + ": no files match");
}

TEST_F(StorageTest, ReadsMoveThePositionReadAtDoesNot) {
    const std::string data = pattern(10500);
    const std::string file = makeFile("f.bin", data.size());
    Storage storage;
    auto f = storage.open(file);
    EXPECT_EQ(f->size(), 10500u);
    EXPECT_EQ(f->path(), file);
    std::string buf(4000, '\0');
    EXPECT_EQ(f->read(buf.data(), buf.size()), 4000u);
    EXPECT_EQ(buf, data.substr(0, 4000));
    EXPECT_EQ(f->position(), 4000u);
    EXPECT_EQ(f->readAt(10000, buf.data(), 1000), 500u);
    EXPECT_EQ(buf.substr(0, 500), data.substr(10000));
    EXPECT_EQ(f->position(), 4000u);
    const std::vector<uint8_t> rest = f->readAll();
    EXPECT_EQ(std::string(rest.begin(), rest.end()), data.substr(4000));
    EXPECT_EQ(f->read(buf.data(), 10), 0u);
    EXPECT_EQ(f->position(), 10500u);
}

TEST_F(StorageTest, RequestsAreSplitAndCounted) {
    const std::string file = makeFile("f.bin", 10500);
    StorageConfig c;
    c.request_bytes = 1000;
    Storage storage(c);
    auto f = storage.open(file);
    std::vector<char> buf(20000);
    EXPECT_EQ(f->read(buf.data(), 10500), 10500u);
    EXPECT_EQ(storage.stats().requests, 11);
    EXPECT_EQ(f->readAt(0, buf.data(), 2500), 2500u);
    EXPECT_EQ(storage.stats().requests, 14);
    EXPECT_EQ(f->read(buf.data(), 100), 0u);  // at the end: still a request, that found nothing
    EXPECT_EQ(storage.stats().requests, 15);
    EXPECT_EQ(f->readAt(0, buf.data(), 0), 0u);  // nothing asked, nothing requested
    // readAll takes exactly the requests the file needs, without probing past its end.
    EXPECT_EQ(storage.open(file)->readAll().size(), 10500u);
    const StorageStats s = storage.stats();
    EXPECT_EQ(s.requests, 26);
    EXPECT_EQ(s.bytes, 10500 + 2500 + 10500);
    EXPECT_EQ(s.opens, 2);
    EXPECT_EQ(s.emulated_wait_seconds, 0.0);
}

TEST_F(StorageTest, ReadAllSeesAFileThatGrewOrShrank) {
    const std::string file = makeFile("f.bin", 1000);
    Storage storage;
    auto f = storage.open(file);
    test::writeText(dir_ / "f.bin", pattern(3000));
    EXPECT_EQ(f->readAll().size(), 3000u);
    auto g = storage.open(file);
    fs::resize_file(file, 10);
    const std::vector<uint8_t> shrunk = g->readAll();
    EXPECT_EQ(std::string(shrunk.begin(), shrunk.end()), pattern(10));
}

// A clock for checking the emulation's arithmetic exactly, whatever the machine is doing: a
// discrete-event simulation of `threads` threads. Virtual time moves only when every one of them is
// asleep (reads and everything else take none); then the earliest sleeper wakes. A sleep may be set
// to wake `oversleep` late, as a coarse timer does. Each thread calls done() when it has finished.
class VirtualClock final : public StorageClock {
public:
    explicit VirtualClock(int threads = 1, double oversleep = 0.0) : running_(threads), oversleep_(oversleep) {}
    double now() override {
        std::lock_guard<std::mutex> lock(mutex_);
        return now_;
    }
    void sleepUntil(double t) override {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto me = sleepers_.emplace(std::max(t, now_) + oversleep_, next_++).first;
        --running_;
        wake_.notify_all();
        wake_.wait(lock, [&] { return running_ == 0 && sleepers_.begin() == me; });
        now_ = me->first;
        sleepers_.erase(me);
        ++running_;
    }
    void done() {
        std::lock_guard<std::mutex> lock(mutex_);
        --running_;
        wake_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable wake_;
    int running_;
    const double oversleep_;
    double now_ = 0.0;
    uint64_t next_ = 0;                                // ties wake in the order they slept
    std::set<std::pair<double, uint64_t>> sleepers_;  // (wake time, order)
};

constexpr double kExact = 1e-9;

TEST_F(StorageTest, SharedAndStreamBandwidthAreDelivered) {
    const std::string file = makeFile("big.bin", 25'000'000);
    for (const bool shared : {true, false}) {
        StorageConfig c;
        (shared ? c.bandwidth_mb_s : c.stream_bandwidth_mb_s) = 50.0;  // 25 MB: 0.5 s
        auto clock = std::make_shared<VirtualClock>();
        Storage storage(c, clock);
        auto f = storage.open(file);
        EXPECT_EQ(drain(*f, 4 << 20), 25'000'000u);
        EXPECT_NEAR(clock->now(), 0.5, kExact) << (shared ? "shared" : "stream");
        EXPECT_NEAR(storage.stats().emulated_wait_seconds, 0.5, 1e-6);
    }
}

TEST_F(StorageTest, OpenAndRequestLatencies) {
    const std::string file = makeFile("f.bin", 25 * 4096);
    StorageConfig c;
    c.open_latency_ms = 20.0;
    c.request_latency_ms = 10.0;
    c.request_bytes = 4096;
    auto clock = std::make_shared<VirtualClock>();
    Storage storage(c, clock);
    for (int i = 0; i < 25; ++i) storage.open(file);
    EXPECT_NEAR(clock->now(), 25 * 0.020, kExact);
    auto f = storage.open(file);
    std::vector<char> buf(25 * 4096);
    EXPECT_EQ(f->read(buf.data(), buf.size()), buf.size());  // one read, split into 25 requests
    EXPECT_NEAR(clock->now(), 26 * 0.020 + 25 * 0.010, kExact);
    EXPECT_EQ(storage.stats().opens, 26);
    EXPECT_EQ(storage.stats().requests, 25);
}

// A timer that wakes 4 ms late on every sleep (a 250 Hz tick) would turn 25 opens of 20 ms into
// 0.6 s; made up on the following waits, they take 0.5 s plus the last wake-up's 4 ms.
TEST_F(StorageTest, LateWakeUpsAreMadeUp) {
    const std::string file = makeFile("f.bin", 10);
    StorageConfig c;
    c.open_latency_ms = 20.0;
    auto clock = std::make_shared<VirtualClock>(1, 0.004);
    Storage storage(c, clock);
    for (int i = 0; i < 25; ++i) storage.open(file);
    EXPECT_NEAR(clock->now(), 25 * 0.020 + 0.004, kExact);
    // Oversleeping by more than a wait is made up over several, never beyond kMaxCatchUpSeconds.
    auto slow = std::make_shared<VirtualClock>(1, 0.050);
    Storage late(c, slow);
    late.open(file);  // wakes at 0.070: 0.050 late, of which kMaxCatchUpSeconds is owed
    late.open(file);  // owes all of its 0.020: no sleep
    EXPECT_NEAR(slow->now(), 0.070, kExact);
    late.open(file);  // owes nothing more: sleeps and wakes late again
    EXPECT_NEAR(slow->now(), 0.070 + 0.020 + 0.050, kExact);
}

// Four readers, each on its own file: per-stream limits add up while the shared link has room; a
// shared limit below their sum caps the aggregate.
TEST_F(StorageTest, ParallelStreams) {
    const size_t perFile = 6'250'000;
    std::vector<std::string> files;
    for (int i = 0; i < 4; ++i) files.push_back(makeFile("s" + std::to_string(i), perFile));
    for (const double shared : {0.0, 25.0}) {
        StorageConfig c;
        c.stream_bandwidth_mb_s = 12.5;  // each file alone: 0.5 s
        c.bandwidth_mb_s = shared;       // 25 MB/s < 4 x 12.5: all four take 1 s
        auto clock = std::make_shared<VirtualClock>(static_cast<int>(files.size()));
        Storage storage(c, clock);
        std::vector<double> ends(files.size());
        std::vector<std::thread> readers;
        for (size_t i = 0; i < files.size(); ++i)
            readers.emplace_back([&, i] {
                drain(*storage.open(files[i]), 1 << 20);
                ends[i] = clock->now();
                clock->done();
            });
        for (auto& t : readers) t.join();
        const double last = *std::max_element(ends.begin(), ends.end());
        if (shared > 0) {
            EXPECT_NEAR(last, 1.0, 0.05) << "25 MB through 25 MB/s";
        } else {
            for (double e : ends) EXPECT_NEAR(e, 0.5, kExact);
        }
        EXPECT_EQ(storage.stats().bytes, static_cast<int64_t>(4 * perFile));
    }
}

// Latencies of concurrent opens and requests overlap, as on an object store.
TEST_F(StorageTest, ConcurrentLatenciesOverlap) {
    const std::string file = makeFile("f.bin", 10 * 100);
    StorageConfig c;
    c.open_latency_ms = 20.0;
    c.request_latency_ms = 20.0;
    c.request_bytes = 100;
    auto clock = std::make_shared<VirtualClock>(4);
    Storage storage(c, clock);
    std::vector<double> ends(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < ends.size(); ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2; ++i) storage.open(file)->readAll();  // 1 open + 10 requests each
            ends[t] = clock->now();
            clock->done();
        });
    for (auto& t : threads) t.join();
    for (double e : ends) EXPECT_NEAR(e, 2 * 11 * 0.020, kExact);
    EXPECT_EQ(storage.stats().requests, 4 * 2 * 10);
}

// The same with real sleeps on the steady clock. Sleeping can only wake late, and late wake-ups are
// made up, so the emulated latency is a firm lower bound; a busy machine may add to it, and the
// upper bounds only rule out latencies charged twice or concurrent waits that run one after another.
TEST_F(StorageTimingTest, RealSleepsChargeAndOverlap) {
    const std::string file = makeFile("f.bin", 10);
    StorageConfig c;
    c.open_latency_ms = 20.0;
    {
        Storage storage(c);
        const auto t0 = Clock::now();
        for (int i = 0; i < 10; ++i) storage.open(file);
        const double elapsed = secondsSince(t0);
        EXPECT_GE(elapsed, 10 * 0.020);
        EXPECT_LT(elapsed, 10 * 0.020 * 1.8);
        EXPECT_GT(storage.stats().emulated_wait_seconds, 0.9 * 10 * 0.020);
    }
    {
        Storage storage(c);
        const auto t0 = Clock::now();
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 10; ++i) storage.open(file);
            });
        for (auto& t : threads) t.join();
        const double elapsed = secondsSince(t0);
        EXPECT_GE(elapsed, 10 * 0.020);
        EXPECT_LT(elapsed, 4 * 10 * 0.020 * 0.6) << "4 threads' opens did not overlap";
    }
}

}  // namespace
}  // namespace trainbench::engine
