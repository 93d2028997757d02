// Input-pipeline sources, timed on one thread: CSV parsing and PNG decoding of Fashion-MNIST-sized
// examples. Medians over rounds; the CSV file is in the page cache (just written), so the figures
// are parse cost, not disk speed.
#include "bench/sourcesprobe.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "bench/benchutil.h"
#include "engine/data/imagedataset.h"
#include "engine/data/sources/csv.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/data/storage/storage.h"

using namespace trainbench::engine;
using Clock = std::chrono::steady_clock;

namespace {

using trainbench::bench::median;

using trainbench::bench::secondsSince;

// 60000 Fashion-MNIST training images when the Debian package is installed; otherwise noise with
// the same share of zero pixels (about half), so line lengths are alike.
ImageDataset examples(int64_t count) {
    try {
        DataConfig cfg;
        cfg.train_limit = count;
        ImageDataset ds = loadIdxDataset(cfg, true);
        std::printf("data: Fashion-MNIST, %lld images\n", static_cast<long long>(ds.count));
        return ds;
    } catch (const std::exception& e) {
        std::printf("data: synthetic (%s)\n", e.what());
    }
    ImageDataset ds;
    ds.count = count;
    ds.height = ds.width = 28;
    ds.num_classes = 10;
    uint32_t s = 42;
    ds.pixels.resize(static_cast<size_t>(count) * 784);
    for (auto& p : ds.pixels) {
        s = s * 1664525u + 1013904223u;
        p = (s >> 31) ? 0 : static_cast<uint8_t>(s >> 23);
    }
    for (int64_t i = 0; i < count; ++i) ds.labels.push_back(static_cast<int32_t>(i % 10));
    return ds;
}

}  // namespace

int csvParseBench(const std::string& dir, int rounds) {
    const ImageDataset ds = examples(60000);
    const std::string path = dir + "/trainbench-bench-" + std::to_string(::getpid()) + ".csv";
    {
        std::ofstream f(path, std::ios::binary);
        std::string line = "label";
        for (int i = 0; i < 784; ++i) line += ",pixel" + std::to_string(i);
        f << line << '\n';
        for (int64_t n = 0; n < ds.count; ++n) {
            line = std::to_string(ds.labels[static_cast<size_t>(n)]);
            for (int64_t i = 0; i < 784; ++i) {
                line += ',';
                line += std::to_string(ds.pixels[static_cast<size_t>(n * 784 + i)]);
            }
            f << line << '\n';
        }
    }
    const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    CsvOptions options;
    options.label_column = "label";
    std::vector<double> readOnly, full;
    int64_t lines = 0;
    for (int r = 0; r < rounds; ++r) {
        Storage storage;
        auto t0 = Clock::now();
        {
            CsvReader reader(storage.open(path), options);
            Record rec;
            lines = 0;
            while (reader.next(rec)) ++lines;
        }
        readOnly.push_back(secondsSince(t0));
        t0 = Clock::now();
        CsvReader reader(storage.open(path), options);
        Record rec;
        Sample s;
        double checksum = 0;
        while (reader.next(rec)) {
            decodeCsvLine(rec, reader.layout(), s, reader.path());
            checksum += s.x[400] + s.label;
        }
        full.push_back(secondsSince(t0));
        if (checksum < 0) std::printf("impossible\n");
    }
    std::filesystem::remove(path);
    const double tr = median(readOnly), tf = median(full);
    std::printf("CSV %lld x 785, %.1f MB, 1 thread, median of %d\n", static_cast<long long>(lines), mb, rounds);
    std::printf("  lines only (CsvReader)        %7.3f s  %7.0f MB/s  %8.0f lines/s\n", tr, mb / tr, lines / tr);
    std::printf("  lines + decodeCsvLine         %7.3f s  %7.0f MB/s  %8.0f examples/s\n", tf, mb / tf, lines / tf);
    return 0;
}

int imageDecodeBench(int images, int rounds) {
    const ImageDataset ds = examples(images);
    std::vector<std::string> pngs;
    size_t bytes = 0;
    for (int64_t i = 0; i < ds.count; ++i) {
        pngs.push_back(encodePng(ds.pixels.data() + i * 784, 1, 28, 28));
        bytes += pngs.back().size();
    }
    DecodedImage img;
    std::vector<double> perImage;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        for (const std::string& p : pngs)
            decodeImage(reinterpret_cast<const uint8_t*>(p.data()), p.size(), 1, img, "bench.png");
        perImage.push_back(secondsSince(t0) / static_cast<double>(pngs.size()));
    }
    std::printf("PNG 28x28 grey, %zu images, mean file %.0f bytes, 1 thread, median of %d rounds\n", pngs.size(),
                static_cast<double>(bytes) / static_cast<double>(pngs.size()), rounds);
    std::printf("  decodeImage  %.2f us per image  (%.0f images/s)\n", median(perImage) * 1e6, 1.0 / median(perImage));
    return 0;
}
