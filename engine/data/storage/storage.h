#pragma once
// Every file the input pipeline reads goes through a Storage. It reads the real file (page cache,
// disk) and, when configured, adds the costs of slower storage on top: a bandwidth limit shared by
// all open files, a per-file (per-stream) bandwidth limit, a latency on every open and a latency on
// every read request. That reproduces an HDD or a cloud object store on a laptop, and with it the
// "too many small files" and "too few files" effects (domain.md, input pipelines).
//
// Thread-safe: many pipeline threads open and read files of one Storage at once; the shared
// bandwidth is a single link they queue on, while latencies of concurrent requests overlap (as they
// do on a real object store, which is why parallel reads help there).
//
// Emulated costs are paid by sleeping. A sleep wakes late (by a few microseconds on an idle machine,
// by a timer tick of several milliseconds on a busy or coarse-timer one), and a reader that sleeps
// once per request would add every late wake-up to the emulated time. So each thread keeps what it
// overslept and takes it off its next waits (at most kMaxCatchUpSeconds at a time): over many
// requests the delivered rate is the configured one, not the configured one minus the timer's error.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace trainbench::engine {

struct StorageConfig {
    // "local" (no emulation), "ssd", "hdd", "cloud"; the numeric fields below, when given in an
    // experiment, override the preset's values.
    std::string preset = "local";
    double bandwidth_mb_s = 0.0;         // all streams together, MB = 1e6 bytes (0 = unlimited)
    double stream_bandwidth_mb_s = 0.0;  // each open file on its own (0 = unlimited)
    double open_latency_ms = 0.0;        // charged once per open
    double request_latency_ms = 0.0;     // charged once per read request
    int64_t request_bytes = 0;           // a larger read is split into requests of this size (0 = no split)
};

// The values of a named preset ("local", "ssd", "hdd", "cloud"). Throws std::invalid_argument
// naming the preset and listing the known ones for an unknown name.
StorageConfig storagePreset(const std::string& name);
// Names of the presets, in the order docs list them.
std::vector<std::string> storagePresetNames();

// Totals over a Storage's life (all files); cheap to read while the pipeline runs.
struct StorageStats {
    int64_t opens = 0;
    int64_t requests = 0;
    int64_t bytes = 0;
    double emulated_wait_seconds = 0.0;  // time spent sleeping for emulated latency and bandwidth
};

class Storage;

// Where a Storage reads the time and how it waits. The default is the steady clock and a real
// sleep; tests substitute a virtual clock to check the emulation's arithmetic exactly.
class StorageClock {
public:
    virtual ~StorageClock() = default;
    virtual double now() = 0;                   // seconds on a monotonic clock
    virtual void sleepUntil(double seconds) = 0;  // returns at or after `seconds`
};
std::shared_ptr<StorageClock> steadyStorageClock();

// One open file. Not thread-safe by itself: one reader uses it at a time.
class StorageFile {
public:
    ~StorageFile();
    StorageFile(const StorageFile&) = delete;
    StorageFile& operator=(const StorageFile&) = delete;

    // Reads up to n bytes at the current position and advances it; returns the bytes read (less
    // than n only at end of file, 0 there). Throws DataError naming the file and offset on an I/O error.
    // Each request_bytes piece is one request, a read that finds the end of the file included; n = 0
    // is none.
    size_t read(void* dst, size_t n);
    // Reads up to n bytes at `offset` without moving the position.
    size_t readAt(uint64_t offset, void* dst, size_t n);
    // Reads the whole file from the current position to its end, in the requests its size needs (no
    // probing read past the end); a file that grew since open() is read to its present end.
    std::vector<uint8_t> readAll();

    uint64_t size() const { return size_; }
    uint64_t position() const { return pos_; }
    const std::string& path() const { return path_; }

private:
    friend class Storage;
    StorageFile(Storage& storage, int fd, std::string path, uint64_t size);
    Storage& storage_;
    int fd_;
    std::string path_;
    uint64_t size_;
    uint64_t pos_ = 0;
    double streamFreeAt_ = 0.0;  // per-stream bandwidth clock (seconds on the storage's clock)
};

class Storage {
public:
    // Throws std::invalid_argument for a negative, NaN or infinite rate or latency, or a negative
    // request_bytes. The numbers are used as given: `preset` only names them (see storagePreset).
    explicit Storage(StorageConfig config = {}, std::shared_ptr<StorageClock> clock = nullptr);

    // Most a thread's next waits are shortened to make up for its late wake-ups.
    static constexpr double kMaxCatchUpSeconds = 0.02;

    // Opens `path` for reading (charging the open latency). Throws DataError naming the path and
    // the system's reason for a missing or unreadable file, or a directory.
    std::unique_ptr<StorageFile> open(const std::string& path);

    // Files matching `pattern`, sorted by name: a directory (its regular files), a glob
    // ("/data/train-*.tfrecord"), or a plain file path. Throws DataError if nothing matches.
    std::vector<std::string> list(const std::string& pattern) const;

    StorageStats stats() const;
    const StorageConfig& config() const { return config_; }
    bool emulated() const;

private:
    friend class StorageFile;
    // Called by StorageFile after each request that started at `start` (clock seconds):
    // sleeps until the emulated storage would have delivered `bytes`.
    void chargeRequest(StorageFile& file, size_t bytes, double start);
    // Waits until `t` on the clock, less what this thread overslept before; counts the wait.
    void waitUntil(double t);

    StorageConfig config_;
    std::shared_ptr<StorageClock> clock_;
    uint64_t id_;  // unique over the process's life, unlike the address
    mutable std::mutex linkMutex_;
    double linkFreeAt_ = 0.0;  // shared bandwidth clock (seconds on the storage's clock)
    std::atomic<int64_t> opens_{0}, requests_{0}, bytes_{0};
    std::atomic<int64_t> waitNanos_{0};
};

}  // namespace trainbench::engine
