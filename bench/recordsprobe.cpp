#include "recordsprobe.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include "bench/benchutil.h"
#include "engine/data/imagedataset.h"
#include "engine/data/records/crc32c.h"
#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/storage/storage.h"

namespace trainbench::bench {
namespace {

using namespace trainbench::engine;
double seconds(const std::function<void()>& f) {
    const auto t0 = Clock::now();
    f();
    return secondsSince(t0);
}

volatile uint32_t gSink;  // keeps results alive so nothing is optimised away

}  // namespace

int crc32cThroughput(int rounds, int mib) {
    const size_t n = static_cast<size_t>(mib) << 20;
    std::vector<uint8_t> buf(n);
    uint32_t s = 1;
    for (auto& b : buf) {
        s = s * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(s >> 24);
    }
    constexpr size_t kRecord = 850;  // a Fashion-MNIST Example, roughly
    auto whole = [&](bool hw) {
        gSink = hw ? crc32c(buf.data(), n) : crc32cPortable(buf.data(), n);
    };
    auto pieces = [&](bool hw) {
        uint32_t acc = 0;
        for (size_t at = 0; at + kRecord <= n; at += kRecord)
            acc ^= hw ? crc32c(buf.data() + at, kRecord) : crc32cPortable(buf.data() + at, kRecord);
        gSink = acc;
    };
    whole(true);
    whole(false);
    std::vector<double> hw, sw, hwRec, swRec;
    for (int r = 0; r < rounds; ++r) {  // alternated, so drift of the machine hits all alike
        hw.push_back(seconds([&] { whole(true); }));
        sw.push_back(seconds([&] { whole(false); }));
        hwRec.push_back(seconds([&] { pieces(true); }));
        swRec.push_back(seconds([&] { pieces(false); }));
    }
    const double gb = static_cast<double>(n) / 1e9;
    std::printf("CRC-32C over %d MiB, median of %d rounds (crc32c() uses the %s path on this CPU)\n", mib, rounds,
                crc32cHardware() ? "hardware" : "portable");
    std::printf("  one buffer          hardware %6.2f GB/s   portable (slicing-by-8) %5.2f GB/s\n",
                gb / median(hw), gb / median(sw));
    std::printf("  %zu-byte pieces     hardware %6.2f GB/s   portable (slicing-by-8) %5.2f GB/s\n", kRecord,
                gb / median(hwRec), gb / median(swRec));
    return 0;
}

int tfrecordRead(int rounds, int threads, bool zlib, const std::string& file) {
    // Fashion-MNIST when installed, else random pixels of the same shape.
    std::vector<uint8_t> pixels;
    std::vector<int32_t> labels;
    int64_t count = 60000;
    try {
        const ImageDataset ds = loadIdxDataset(DataConfig{}, true);
        pixels = ds.pixels;
        labels = ds.labels;
        count = ds.count;
    } catch (const std::exception& e) {
        std::printf("(Fashion-MNIST not available: %s; using random pixels)\n", e.what());
        pixels.resize(static_cast<size_t>(count) * 784);
        uint32_t s = 7;
        for (auto& p : pixels) p = static_cast<uint8_t>((s = s * 1664525u + 1013904223u) >> 24);
        for (int64_t i = 0; i < count; ++i) labels.push_back(static_cast<int32_t>(i % 10));
    }
    const Compression c = zlib ? Compression::kZlib : Compression::kNone;
    const std::string path =
        file.empty() ? (std::filesystem::temp_directory_path() /
                        ("trainbench-bench-" + std::to_string(::getpid()) + ".tfrecord"))
                           .string()
                     : file;
    {
        TFRecordWriter w(path, c);
        for (int64_t i = 0; i < count; ++i)
            w.write(encodeExample(pixels.data() + i * 784, 784, labels[static_cast<size_t>(i)], ImageShape{1, 28, 28}));
        w.close();
    }
    const double fileBytes = static_cast<double>(std::filesystem::file_size(path));

    // One pass over the file per thread; with decode, every record becomes a Sample.
    auto pass = [&](bool decode) {
        std::atomic<int64_t> records{0};
        auto work = [&] {
            Storage storage;
            TFRecordReader reader(storage.open(path), c);
            std::string rec;
            Sample sample;
            uint64_t offset = 0;
            int64_t n = 0;
            while (reader.next(rec, &offset)) {
                if (decode) decodeExample(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), 784, sample, path);
                ++n;
            }
            records += n;
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work);
        work();
        for (auto& th : pool) th.join();
        if (records != count * threads)
            std::printf("unexpected record count %lld\n", static_cast<long long>(records.load()));
    };
    pass(true);  // page cache and allocations warm
    std::vector<double> readOnly, readDecode;
    for (int r = 0; r < rounds; ++r) {
        readOnly.push_back(seconds([&] { pass(false); }));
        readDecode.push_back(seconds([&] { pass(true); }));
    }
    if (file.empty()) std::filesystem::remove(path);

    const double n = static_cast<double>(count) * threads;
    const double bytes = fileBytes * threads;
    std::printf("TFRecord (%s, %.1f MB, %lld Examples of 28x28 u8) from the page cache, %d thread(s), median of %d\n",
                compressionName(c), fileBytes / 1e6, static_cast<long long>(count), threads, rounds);
    for (const auto& [name, times] : {std::pair{"read", &readOnly}, {"read + decodeExample", &readDecode}}) {
        const double t = median(*times);
        std::printf("  %-22s %8.0f MB/s  %10.0f records/s  %6.0f ns/record\n", name, bytes / t / 1e6, n / t,
                    t / n * 1e9 * threads);
    }
    return 0;
}

}  // namespace trainbench::bench
