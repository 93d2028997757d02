#include "engine/data/storage/storage.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

using Clock = std::chrono::steady_clock;

class SteadyClock final : public StorageClock {
public:
    double now() override { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }
    void sleepUntil(double t) override {
        std::this_thread::sleep_until(
            Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t))));
    }
};

// What the calling thread overslept on its last waits and has not yet made up, and for which
// Storage (a thread that moves on to another Storage starts afresh).
struct Oversleep {
    uint64_t storage = 0;  // Storage::id_
    double seconds = 0.0;
};
thread_local Oversleep tOversleep;
std::atomic<uint64_t> gNextStorageId{1};

std::string errnoText(int err) { return std::strerror(err); }

struct Preset {
    const char* name;
    StorageConfig config;
};

// Typical figures: an NVMe SSD; a 7200 rpm disk (every open and every request pays a seek); a cloud
// object store reached over a 10 Gb/s link, where each stream (GET) tops out near 100 MB/s and every
// open and ranged read waits for a round trip.
const Preset kPresets[] = {
    {"local", {"local", 0.0, 0.0, 0.0, 0.0, 0}},
    {"ssd", {"ssd", 2000.0, 0.0, 0.1, 0.1, 0}},
    {"hdd", {"hdd", 150.0, 0.0, 8.0, 8.0, 0}},
    {"cloud", {"cloud", 1000.0, 100.0, 20.0, 10.0, 8 << 20}},
};

}  // namespace

std::shared_ptr<StorageClock> steadyStorageClock() {
    static const std::shared_ptr<StorageClock> clock = std::make_shared<SteadyClock>();
    return clock;
}

StorageConfig storagePreset(const std::string& name) {
    for (const Preset& p : kPresets)
        if (name == p.name) return p.config;
    std::string known;
    for (const Preset& p : kPresets) known += std::string(known.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("unknown storage preset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> storagePresetNames() {
    std::vector<std::string> names;
    for (const Preset& p : kPresets) names.emplace_back(p.name);
    return names;
}

// ---- StorageFile ------------------------------------------------------------------------------

StorageFile::StorageFile(Storage& storage, int fd, std::string path, uint64_t size)
    : storage_(storage), fd_(fd), path_(std::move(path)), size_(size) {}

StorageFile::~StorageFile() {
    if (fd_ >= 0) ::close(fd_);
}

size_t StorageFile::readAt(uint64_t offset, void* dst, size_t n) {
    const size_t split = storage_.config_.request_bytes > 0 ? static_cast<size_t>(storage_.config_.request_bytes) : n;
    auto* out = static_cast<uint8_t*>(dst);
    size_t done = 0;
    while (done < n) {
        const size_t want = std::min(n - done, std::max<size_t>(split, 1));
        const double start = storage_.clock_->now();
        size_t got = 0;
        while (got < want) {
            const ssize_t r = ::pread(fd_, out + done + got, want - got, static_cast<off_t>(offset + done + got));
            if (r < 0) {
                if (errno == EINTR) continue;
                throw DataError(path_ + ": read error at byte offset " + std::to_string(offset + done + got) + ": " +
                                errnoText(errno));
            }
            if (r == 0) break;
            got += static_cast<size_t>(r);
        }
        storage_.requests_.fetch_add(1, std::memory_order_relaxed);
        storage_.bytes_.fetch_add(static_cast<int64_t>(got), std::memory_order_relaxed);
        if (storage_.emulated()) storage_.chargeRequest(*this, got, start);
        done += got;
        if (got < want) break;  // end of file
    }
    return done;
}

size_t StorageFile::read(void* dst, size_t n) {
    const size_t got = readAt(pos_, dst, n);
    pos_ += got;
    return got;
}

std::vector<uint8_t> StorageFile::readAll() {
    std::vector<uint8_t> data(static_cast<size_t>(size_ > pos_ ? size_ - pos_ : 0));
    const size_t got = data.empty() ? 0 : read(data.data(), data.size());
    if (got < data.size()) {  // shrank since it was opened
        data.resize(got);
        return data;
    }
    // A file that grew since it was opened: read on to its present end. fstat tells, not a probing
    // read past the end, which would be one more (charged) request for every whole-file read.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > pos_) {
        const size_t old = data.size();
        data.resize(old + static_cast<size_t>(static_cast<uint64_t>(st.st_size) - pos_));
        data.resize(old + read(data.data() + old, data.size() - old));
    }
    return data;
}

// ---- Storage ----------------------------------------------------------------------------------

Storage::Storage(StorageConfig config, std::shared_ptr<StorageClock> clock)
    : config_(std::move(config)),
      clock_(clock ? std::move(clock) : steadyStorageClock()),
      id_(gNextStorageId.fetch_add(1, std::memory_order_relaxed)) {
    // Finite too: an infinite latency would overflow the clock arithmetic of sleepUntil.
    auto check = [](double v, const char* what) {
        if (!(v >= 0.0) || !std::isfinite(v))
            throw std::invalid_argument(std::string("storage ") + what + " must be >= 0 and finite");
    };
    check(config_.bandwidth_mb_s, "bandwidth_mb_s");
    check(config_.stream_bandwidth_mb_s, "stream_bandwidth_mb_s");
    check(config_.open_latency_ms, "open_latency_ms");
    check(config_.request_latency_ms, "request_latency_ms");
    if (config_.request_bytes < 0) throw std::invalid_argument("storage request_bytes must be >= 0");
}

bool Storage::emulated() const {
    return config_.bandwidth_mb_s > 0 || config_.stream_bandwidth_mb_s > 0 || config_.open_latency_ms > 0 ||
           config_.request_latency_ms > 0;
}

std::unique_ptr<StorageFile> Storage::open(const std::string& path) {
    const double start = clock_->now();
    int fd;
    do {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw DataError(path + ": cannot open: " + errnoText(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw DataError(path + ": cannot stat: " + errnoText(err));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw DataError(path + ": is a directory, not a file");
    }
    // Sequential readers read ahead; tell the kernel so.
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    opens_.fetch_add(1, std::memory_order_relaxed);
    std::unique_ptr<StorageFile> file(new StorageFile(*this, fd, path, static_cast<uint64_t>(st.st_size)));
    if (config_.open_latency_ms > 0) waitUntil(start + config_.open_latency_ms * 1e-3);
    return file;
}

void Storage::chargeRequest(StorageFile& file, size_t bytes, double start) {
    const double ready = start + config_.request_latency_ms * 1e-3;  // first byte after the round trip
    double done = ready;
    if (config_.stream_bandwidth_mb_s > 0) {
        const double begin = std::max(ready, file.streamFreeAt_);
        file.streamFreeAt_ = begin + static_cast<double>(bytes) / (config_.stream_bandwidth_mb_s * 1e6);
        done = std::max(done, file.streamFreeAt_);
    }
    if (config_.bandwidth_mb_s > 0) {
        std::lock_guard<std::mutex> lock(linkMutex_);
        const double begin = std::max(ready, linkFreeAt_);
        linkFreeAt_ = begin + static_cast<double>(bytes) / (config_.bandwidth_mb_s * 1e6);
        done = std::max(done, linkFreeAt_);
    }
    waitUntil(done);
}

void Storage::waitUntil(double t) {
    Oversleep& over = tOversleep;
    if (over.storage != id_) over = {id_, 0.0};
    const double now = clock_->now();
    if (t <= now) return;
    // Make up for earlier late wake-ups first, then sleep what is left.
    const double makeUp = std::min(over.seconds, t - now);
    over.seconds -= makeUp;
    const double target = t - makeUp;
    if (target <= now) return;
    clock_->sleepUntil(target);
    const double woke = clock_->now();
    over.seconds = std::min(over.seconds + std::max(0.0, woke - target), kMaxCatchUpSeconds);
    waitNanos_.fetch_add(static_cast<int64_t>((woke - now) * 1e9), std::memory_order_relaxed);
}

std::vector<std::string> Storage::list(const std::string& pattern) const {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    std::error_code ec;
    if (fs::is_directory(pattern, ec)) {
        // Own error codes for the entries: a dangling symlink sets one, and must not fail the listing.
        fs::directory_iterator it(pattern, ec);
        for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
            std::error_code entryEc;
            if (it->is_regular_file(entryEc)) out.push_back(it->path().string());
        }
        if (ec) throw DataError(pattern + ": cannot list folder: " + ec.message());
    } else if (pattern.find_first_of("*?[") != std::string::npos) {
        glob_t g{};
        const int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
        if (rc == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i)
                if (fs::is_regular_file(g.gl_pathv[i], ec)) out.emplace_back(g.gl_pathv[i]);
        ::globfree(&g);
    } else if (fs::is_regular_file(pattern, ec)) {
        out.push_back(pattern);
    }
    if (out.empty()) throw DataError(pattern + ": no files match");
    std::sort(out.begin(), out.end());
    return out;
}

StorageStats Storage::stats() const {
    StorageStats s;
    s.opens = opens_.load(std::memory_order_relaxed);
    s.requests = requests_.load(std::memory_order_relaxed);
    s.bytes = bytes_.load(std::memory_order_relaxed);
    s.emulated_wait_seconds = static_cast<double>(waitNanos_.load(std::memory_order_relaxed)) * 1e-9;
    return s;
}

}  // namespace trainbench::engine
