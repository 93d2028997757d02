#include "engine/data/convert/converter.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "engine/data/imagedataset.h"
#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/sources/csv.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/data/storage/storage.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

namespace {

namespace fs = std::filesystem;

// Where converted examples go: balanced TFRecord shards, or one file each.
class Sink {
public:
    Sink(const ConvertOptions& o, ConvertResult& result) : result_(result) {
        std::error_code ec;
        fs::create_directories(o.output_dir, ec);
        if (ec) throw DataError(o.output_dir + ": cannot create folder: " + ec.message());
        const std::string prefix = o.prefix.empty() ? (o.train ? "train" : "test") : o.prefix;
        if (o.to == "tfrecord") {
            if (o.shards < 1) throw std::invalid_argument("shards must be >= 1, got " + std::to_string(o.shards));
            const Compression c = parseCompression(o.compression);
            for (int64_t i = 0; i < o.shards; ++i) {
                char name[64];
                std::snprintf(name, sizeof name, "-%05lld-of-%05lld.tfrecord", static_cast<long long>(i),
                              static_cast<long long>(o.shards));
                const std::string path = (fs::path(o.output_dir) / (prefix + name)).string();
                writers_.push_back(std::make_unique<TFRecordWriter>(path, c));
                shardBytes_.push_back(0);
                result_.files.push_back(path);
            }
        } else if (o.to == "files") {
            dir_ = (fs::path(o.output_dir) / (prefix + "-files")).string();
            fs::create_directories(dir_, ec);
            if (ec) throw DataError(dir_ + ": cannot create folder: " + ec.message());
            result_.files.push_back(dir_);
        } else {
            throw std::invalid_argument("unknown output layout '" + o.to + "' (tfrecord or files)");
        }
    }

    void put(const std::string& record) {
        if (!writers_.empty()) {
            // The shard with the fewest bytes so far (the first of equals): equal-sized examples go
            // round robin, and shards of variable-sized ones (JPEGs) still end up the same size.
            size_t best = 0;
            for (size_t i = 1; i < shardBytes_.size(); ++i)
                if (shardBytes_[i] < shardBytes_[best]) best = i;
            writers_[best]->write(record);
            shardBytes_[best] += static_cast<int64_t>(record.size()) + 16;
        } else {
            char name[32];
            std::snprintf(name, sizeof name, "%08lld.example", static_cast<long long>(result_.examples));
            const std::string path = (fs::path(dir_) / name).string();
            writeFile(path, record);
            result_.bytes_written += static_cast<int64_t>(record.size());
        }
        ++result_.examples;
    }

    void close() {
        for (auto& w : writers_) {
            w->close();
            result_.bytes_written += static_cast<int64_t>(w->bytesWritten());
        }
        if (!dir_.empty()) syncFileSystemOf(dir_);
    }

private:
    // One file per example, each whole or not at all; synced together in close(), not one by one.
    static void writeFile(const std::string& path, const std::string& data) {
        writeFileAtomically(path, data, {.what = "example file", .durable = false});
    }

    ConvertResult& result_;
    std::vector<std::unique_ptr<TFRecordWriter>> writers_;
    std::vector<int64_t> shardBytes_;
    std::string dir_;
};

}  // namespace

ConvertResult convertData(const ConvertOptions& o, const std::function<void(int64_t, int64_t)>& progress) {
    const auto start = std::chrono::steady_clock::now();
    ConvertResult result;
    Storage storage(o.source.storage);
    Sink sink(o, result);
    const int64_t limit = o.limit > 0 ? o.limit : INT64_MAX;
    int64_t total = 0;
    auto tick = [&] {
        if (progress && (result.examples % 1000 == 0)) progress(result.examples, total);
    };
    const std::string& ds = o.source.dataset;
    if (ds == "fashion-mnist" || ds == "idx") {
        const ImageDataset d = loadIdxDataset(o.source, o.train, storage);
        total = std::min<int64_t>(d.count, limit);
        const ImageShape shape{d.channels, d.height, d.width};
        const size_t size = static_cast<size_t>(d.exampleSize());
        for (int64_t i = 0; i < total; ++i) {
            sink.put(encodeExample(d.pixels.data() + static_cast<size_t>(i) * size, size, d.labels[static_cast<size_t>(i)], shape));
            tick();
        }
    } else if (ds == "images") {
        const ImageFolderIndex index = listImageFolder(o.train ? o.source.train_files : o.source.test_files);
        total = std::min<int64_t>(static_cast<int64_t>(index.files.size()), limit);
        DecodedImage img;
        for (int64_t i = 0; i < total; ++i) {
            const std::string& path = index.files[static_cast<size_t>(i)];
            const std::vector<uint8_t> bytes = storage.open(path)->readAll();
            decodeImage(bytes.data(), bytes.size(), o.source.channels, img, path);
            sink.put(encodeExample(img.pixels.data(), img.pixels.size(), index.labels[static_cast<size_t>(i)],
                                   {img.channels, img.height, img.width}));
            tick();
        }
    } else {
        const std::vector<std::string> files = storage.list(o.train ? o.source.train_files : o.source.test_files);
        Record r;
        Sample s;
        for (const std::string& path : files) {
            if (result.examples >= limit) break;
            if (ds == "tfrecord") {
                TFRecordReader reader(storage.open(path), parseCompression(o.source.pipeline.compression),
                                      o.source.pipeline.skip_corrupt);
                while (result.examples < limit && reader.next(r.data)) {
                    sink.put(r.data);  // the Example as it was written
                    tick();
                }
            } else if (ds == "example_files") {
                const std::vector<uint8_t> bytes = storage.open(path)->readAll();
                sink.put(std::string(bytes.begin(), bytes.end()));
                tick();
            } else if (ds == "csv") {
                CsvReader reader(storage.open(path), o.source.csv);
                while (result.examples < limit && reader.next(r)) {
                    decodeCsvLine(r, reader.layout(), s, path);
                    sink.put(encodeExampleFloat(s.x.data(), s.x.size(), s.label));
                    tick();
                }
            } else {
                throw DataError("cannot convert from dataset '" + ds + "'");
            }
        }
    }
    sink.close();
    if (progress) progress(result.examples, total > 0 ? total : result.examples);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace trainbench::engine
