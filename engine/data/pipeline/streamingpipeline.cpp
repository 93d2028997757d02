#include "engine/data/pipeline/streamingpipeline.h"

#include "engine/profile/instrument.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/util/errors.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

namespace {

using Clock = std::chrono::steady_clock;

// Names show in top, perf and gdb, so a profile says which pipeline stage a thread belongs to.

int64_t nanosSince(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// Records handed from a reader thread to the pipeline in one go (one lock per chunk, not per record).
constexpr size_t kReadChunkRecords = 64;
constexpr size_t kReadChunkBytes = 1 << 20;
constexpr size_t kSlotQueueChunks = 16;  // chunks a reader thread may run ahead
// Records decoded by one map call.
constexpr size_t kMapChunkRecords = 32;

}  // namespace

// ---- File readers: one file's records --------------------------------------------------------------

class FileRecordReader {
public:
    virtual ~FileRecordReader() = default;
    virtual bool next(Record& r) = 0;
    virtual int64_t skipped() const { return 0; }
};

namespace {

class TfRecordFileReader final : public FileRecordReader {
public:
    TfRecordFileReader(std::unique_ptr<StorageFile> f, Compression c, bool skip, uint32_t file)
        : reader_(std::move(f), c, skip), file_(file) {}
    bool next(Record& r) override {
        if (!reader_.next(r.data, &r.offset)) return false;
        r.format = RecordFormat::kExample;
        r.label = -1;
        r.file = file_;
        return true;
    }
    int64_t skipped() const override { return reader_.skipped(); }

private:
    TFRecordReader reader_;
    uint32_t file_;
};

class CsvFileReader final : public FileRecordReader {
public:
    CsvFileReader(std::unique_ptr<StorageFile> f, const CsvOptions& o, uint32_t file) : reader_(std::move(f), o), file_(file) {}
    const CsvLayout& layout() const { return reader_.layout(); }
    bool next(Record& r) override {
        if (!reader_.next(r)) return false;
        r.file = file_;
        return true;
    }

private:
    CsvReader reader_;
    uint32_t file_;
};

// A file that is one record: an image, or one serialized Example.
class WholeFileReader final : public FileRecordReader {
public:
    WholeFileReader(std::unique_ptr<StorageFile> f, RecordFormat format, int64_t label, uint32_t file)
        : file_(std::move(f)), format_(format), label_(label), index_(file) {}
    bool next(Record& r) override {
        if (done_) return false;
        done_ = true;
        r.data.resize(static_cast<size_t>(file_->size()));
        const size_t got = file_->read(r.data.data(), r.data.size());
        r.data.resize(got);
        r.format = format_;
        r.label = label_;
        r.file = index_;
        r.offset = 0;
        return true;
    }

private:
    std::unique_ptr<StorageFile> file_;
    RecordFormat format_;
    int64_t label_;
    uint32_t index_;
    bool done_ = false;
};

// data.fraction: yields only the kept records of a file, by their position among the records the
// file's own reader yields (skipped corrupt records have none), and stops after the last kept one.
class SubsetReader final : public FileRecordReader {
public:
    SubsetReader(std::unique_ptr<FileRecordReader> inner, const std::vector<bool>& keep)
        : inner_(std::move(inner)), keep_(keep) {
        end_ = keep_.size();
        while (end_ > 0 && !keep_[end_ - 1]) --end_;
    }
    bool next(Record& r) override {
        while (position_ < end_) {
            if (!inner_->next(r)) return false;
            if (keep_[position_++]) return true;
        }
        return false;
    }
    int64_t skipped() const override { return inner_->skipped(); }

private:
    std::unique_ptr<FileRecordReader> inner_;
    const std::vector<bool>& keep_;
    size_t position_ = 0, end_ = 0;
};

}  // namespace

// ---- Internal structures ---------------------------------------------------------------------------

struct RecordChunk {
    std::vector<Record> recs;
    size_t n = 0;
};

// One interleave position: the files it reads this epoch, inline or on its own thread.
struct StreamingPipeline::Slot {
    std::vector<uint32_t> files;  // file indices, in the order this slot reads them
    size_t cursor = 0;            // inline mode: next file to open
    std::unique_ptr<FileRecordReader> reader;  // inline mode: the open file
    int64_t skippedSeen = 0;                   // of reader->skipped(), already counted
    bool exhausted = false;

    // Parallel mode.
    std::thread thread;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::unique_ptr<RecordChunk>> full;
    std::vector<std::unique_ptr<RecordChunk>> empty;
    bool done = false, stop = false;
    std::exception_ptr error;
    std::unique_ptr<RecordChunk> cur;  // consumer side
    size_t curPos = 0;
};

// A batch on its way: its records, gathered by the pipeline thread, then decoded straight into its
// rows by the map stage (tf.data's map-and-batch fusion: no per-example buffer, no second copy).
struct StreamingPipeline::BatchBuf {
    std::vector<Record> recs;
    std::vector<float> x;
    std::vector<int32_t> y;
    int64_t count = 0;
    bool endOfEpoch = false;
    // Decoding (guarded by the pool's mutex when the pool decodes).
    int pending = 0;
    std::exception_ptr error;
    size_t errorRow = SIZE_MAX;  // the first failing row wins, whatever thread finished first
};

// Threads decoding runs of rows of batches; the pipeline waits for a batch's runs in order.
class StreamingPipeline::MapPool {
public:
    MapPool(StreamingPipeline& owner, int64_t threads) : owner_(owner) {
        for (int64_t i = 0; i < threads; ++i)
            threads_.emplace_back([this] {
                setThreadName("tb-map");
                work();
            });
    }
    ~MapPool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }
    // Decodes rows [0, b.count) of b in runs of kMapChunkRecords.
    void submit(BatchBuf& b) {
        {
            std::lock_guard<std::mutex> lock(m_);
            b.error = nullptr;
            b.errorRow = SIZE_MAX;
            b.pending = 0;
            for (size_t begin = 0; begin < static_cast<size_t>(b.count); begin += kMapChunkRecords) {
                queue_.push_back({&b, begin, std::min(static_cast<size_t>(b.count), begin + kMapChunkRecords)});
                ++b.pending;
            }
        }
        cv_.notify_all();
    }
    void wait(BatchBuf& b) {
        std::unique_lock<std::mutex> lock(m_);
        doneCv_.wait(lock, [&] { return b.pending == 0; });
    }
    // Waits for b, decoding queued rows meanwhile instead of sleeping: the waiting thread becomes
    // one more decoder, and on a small machine no core idles while a batch is late.
    void helpUntilDone(BatchBuf& b) {
        std::unique_lock<std::mutex> lock(m_);
        while (b.pending > 0) {
            if (queue_.empty()) {
                doneCv_.wait(lock, [&] { return b.pending == 0 || !queue_.empty(); });
                continue;
            }
            const Task t = queue_.front();
            queue_.pop_front();
            lock.unlock();
            run(t);
            lock.lock();
        }
    }
    size_t queued() {
        std::lock_guard<std::mutex> lock(m_);
        return queue_.size();
    }

private:
    struct Task {
        BatchBuf* b;
        size_t begin, end;
    };
    void work() {
        for (;;) {
            Task t;
            {
                std::unique_lock<std::mutex> lock(m_);
                cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                t = queue_.front();
                queue_.pop_front();
            }
            run(t);
        }
    }
    void run(const Task& t) {
        std::exception_ptr error;
        size_t row = SIZE_MAX;
        try {
            owner_.decodeRows(*t.b, t.begin, t.end, row);
        } catch (...) {
            error = std::current_exception();
        }
        bool last;
        {
            std::lock_guard<std::mutex> lock(m_);
            if (error && row < t.b->errorRow) {
                t.b->error = error;
                t.b->errorRow = row;
            }
            last = --t.b->pending == 0;
        }
        if (last) doneCv_.notify_all();
    }
    StreamingPipeline& owner_;
    std::mutex m_;
    std::condition_variable cv_, doneCv_;
    std::deque<Task> queue_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

// ---- Listing ---------------------------------------------------------------------------------------

SourceFiles listSourceFiles(const DataConfig& data, bool train, const Storage& storage) {
    const std::string& pattern = train ? data.train_files : data.test_files;
    const char* key = train ? "data.train_files" : "data.test_files";
    if (pattern.empty()) throw DataError(std::string(key) + " is empty: dataset '" + data.dataset + "' needs files to read");
    SourceFiles s;
    if (data.dataset == "images") {
        ImageFolderIndex index = listImageFolder(pattern);
        s.format = RecordFormat::kImageFile;
        s.files = std::move(index.files);
        s.labels = std::move(index.labels);
        s.description = std::to_string(s.files.size()) + " images in " + std::to_string(index.classes.size()) +
                        " class folders of " + pattern;
        s.examples = static_cast<int64_t>(s.files.size());
        return s;
    }
    s.files = storage.list(pattern);
    if (data.dataset == "tfrecord") {
        s.format = RecordFormat::kExample;
        s.description = std::to_string(s.files.size()) + " TFRecord file(s) from " + pattern;
    } else if (data.dataset == "csv") {
        s.format = RecordFormat::kCsvLine;
        s.description = std::to_string(s.files.size()) + " CSV file(s) from " + pattern;
    } else if (data.dataset == "example_files") {
        s.format = RecordFormat::kExample;
        s.description = std::to_string(s.files.size()) + " one-example files from " + pattern;
        s.examples = static_cast<int64_t>(s.files.size());
    } else {
        throw DataError("dataset '" + data.dataset + "' is not a streaming source");
    }
    return s;
}

// ---- Construction ----------------------------------------------------------------------------------

StreamingPipeline::StreamingPipeline(const DataConfig& data, SourceFiles source, int64_t batch_size, bool shuffle,
                                     bool drop_remainder, uint64_t seed, const PipelineChoice& choice,
                                     std::shared_ptr<Storage> storage)
    : data_(data), source_(std::move(source)), batch_size_(batch_size), shuffle_(shuffle),
      drop_remainder_(drop_remainder), seed_(seed), choice_(choice), storage_(std::move(storage)) {
    if (batch_size <= 0) throw std::invalid_argument("batch size must be > 0");
    if (source_.files.empty()) throw DataError("no input files");
    const PipelineConfig& p = data_.pipeline;
    if (p.shard_count < 1 || p.shard_index < 0 || p.shard_index >= p.shard_count)
        throw std::invalid_argument("shard index " + std::to_string(p.shard_index) + " is not in [0, " +
                                    std::to_string(p.shard_count) + ")");
    if (p.shard_by == "file" && p.shard_count > static_cast<int64_t>(source_.files.size()))
        throw DataError("cannot shard " + std::to_string(source_.files.size()) + " file(s) by file over " +
                        std::to_string(p.shard_count) + " workers: some would get no data (shard by element, or write more files)");
    choice_.cycle_length = std::max<int64_t>(1, choice_.cycle_length);
    choice_.map_parallel_calls = std::max<int64_t>(1, choice_.map_parallel_calls);
    choice_.prefetch = std::max<int64_t>(0, choice_.prefetch);
    csvLayouts_.resize(source_.files.size());
    csvLayoutOnce_ = std::make_unique<std::once_flag[]>(source_.files.size());

    // Probe: the first record of the first file fixes the example shape.
    {
        auto reader = openReader(0);
        Record r;
        if (!reader->next(r)) throw DataError(source_.files[0] + ": holds no records");
        Sample s;
        decodeRecord(r, s);
        example_size_ = static_cast<int64_t>(s.x.size());
        if (example_size_ == 0) throw DataError(source_.files[0] + ": the first record has no features");
        if (s.channels > 0 && s.height > 0 && s.width > 0 && s.channels * s.height * s.width == example_size_) {
            channels_ = s.channels;
            height_ = s.height;
            width_ = s.width;
        } else {
            channels_ = 1;
            height_ = 1;
            width_ = example_size_;
        }
    }
    // A source counted beforehand (one example per file, or a data.fraction subset) has a known
    // epoch from the start, unless this worker reads only its shard of it.
    if (p.shard_count == 1) knownExamples_.store(source_.examples, std::memory_order_relaxed);
    shufCap_ = shuffle_ ? std::max<int64_t>(1, p.shuffle_buffer) : 0;
    shufBuf_.resize(static_cast<size_t>(shufCap_));
    if (choice_.map_parallel_calls > 1) pool_ = std::make_unique<MapPool>(*this, choice_.map_parallel_calls);
    handed_ = std::make_unique<BatchBuf>();
}

StreamingPipeline::~StreamingPipeline() {
    {
        std::lock_guard<std::mutex> lock(qMutex_);
        stop_ = true;
    }
    qCv_.notify_all();
    spaceCv_.notify_all();
    if (producer_.joinable()) producer_.join();
    endEpochStream();
    stopSlots(preparedSlots_);
}

std::unique_ptr<FileRecordReader> StreamingPipeline::openReader(uint32_t fileIndex) {
    std::unique_ptr<FileRecordReader> reader = openFileReader(fileIndex);
    if (fileIndex < source_.keep.size() && !source_.keep[fileIndex].empty())
        return std::make_unique<SubsetReader>(std::move(reader), source_.keep[fileIndex]);
    return reader;
}

std::unique_ptr<FileRecordReader> StreamingPipeline::openFileReader(uint32_t fileIndex) {
    const std::string& path = source_.files[fileIndex];
    switch (source_.format) {
        case RecordFormat::kExample:
            if (data_.dataset == "example_files")
                return std::make_unique<WholeFileReader>(storage_->open(path), RecordFormat::kExample, -1, fileIndex);
            return std::make_unique<TfRecordFileReader>(storage_->open(path), parseCompression(data_.pipeline.compression),
                                                        data_.pipeline.skip_corrupt, fileIndex);
        case RecordFormat::kCsvLine: {
            auto r = std::make_unique<CsvFileReader>(storage_->open(path), data_.csv, fileIndex);
            std::call_once(csvLayoutOnce_[fileIndex], [&] { csvLayouts_[fileIndex] = r->layout(); });
            return r;
        }
        case RecordFormat::kImageFile:
            return std::make_unique<WholeFileReader>(storage_->open(path), RecordFormat::kImageFile,
                                                     source_.labels[fileIndex], fileIndex);
    }
    throw DataError(path + ": unknown record format");
}

// ---- Decoding --------------------------------------------------------------------------------------

void StreamingPipeline::decodeRecord(Record& r, Sample& s) {
    const std::string& path = source_.files[r.file];
    const auto* bytes = reinterpret_cast<const uint8_t*>(r.data.data());
    switch (r.format) {
        case RecordFormat::kExample:
            try {
                decodeExample(bytes, r.data.size(), static_cast<size_t>(example_size_), s, "");
            } catch (const DataError& e) {
                // Built only on failure: the hot path allocates no location string.
                const std::string what = e.what();
                throw DataError(path + ": record at byte offset " + std::to_string(r.offset) + ": " +
                                (what.rfind(": ", 0) == 0 ? what.substr(2) : what));
            }
            break;
        case RecordFormat::kCsvLine:
            decodeCsvLine(r, csvLayouts_[r.file], s, path);
            s.channels = s.height = s.width = 0;
            break;
        case RecordFormat::kImageFile: {
            thread_local DecodedImage img;
            decodeImage(bytes, r.data.size(), data_.channels, img, path);
            const size_t n = img.pixels.size();
            s.x.resize(n);
            for (size_t i = 0; i < n; ++i) s.x[i] = static_cast<float>(img.pixels[i]) * (1.0f / 255.0f);
            s.label = static_cast<int32_t>(r.label);
            s.channels = img.channels;
            s.height = img.height;
            s.width = img.width;
            break;
        }
    }
    if (example_size_ > 0 && static_cast<int64_t>(s.x.size()) != example_size_) {
        const std::string where = r.format == RecordFormat::kCsvLine ? path + ":" + std::to_string(r.offset)
                                  : r.format == RecordFormat::kImageFile ? path
                                  : path + ": record at byte offset " + std::to_string(r.offset);
        throw DataError(where + ": has " + std::to_string(s.x.size()) + " features, but the first record (" +
                        source_.files[0] + ") has " + std::to_string(example_size_));
    }
    if (s.label < 0 || (data_.num_classes > 0 && s.label >= data_.num_classes)) {
        const std::string where = r.format == RecordFormat::kCsvLine ? path + ":" + std::to_string(r.offset)
                                  : r.format == RecordFormat::kImageFile ? path
                                  : path + ": record at byte offset " + std::to_string(r.offset);
        throw DataError(where + ": label " + std::to_string(s.label) + " is outside [0, " +
                        std::to_string(data_.num_classes) + ")");
    }
}

void StreamingPipeline::decodeRecordInto(Record& r, float* dst, int32_t& label) {
    if (r.format != RecordFormat::kExample) {
        thread_local Sample sample;
        decodeRecord(r, sample);  // checks size and label
        std::memcpy(dst, sample.x.data(), static_cast<size_t>(example_size_) * sizeof(float));
        label = sample.label;
        return;
    }
    const std::string& path = source_.files[r.file];
    try {
        decodeExample(reinterpret_cast<const uint8_t*>(r.data.data()), r.data.size(), static_cast<size_t>(example_size_),
                      dst, label, "");
    } catch (const DataError& e) {
        // Built only on failure: the hot path allocates no location string.
        const std::string what = e.what();
        throw DataError(path + ": record at byte offset " + std::to_string(r.offset) + ": " +
                        (what.rfind(": ", 0) == 0 ? what.substr(2) : what));
    }
    if (data_.num_classes > 0 && label >= data_.num_classes)
        throw DataError(path + ": record at byte offset " + std::to_string(r.offset) + ": label " + std::to_string(label) +
                        " is outside [0, " + std::to_string(data_.num_classes) + ")");
}

void StreamingPipeline::decodeRows(BatchBuf& b, size_t begin, size_t end, size_t& failedRow) {
    TB_ZONE("pipeline", "map (decode)");
    const auto t0 = Clock::now();
    const size_t F = static_cast<size_t>(example_size_);
    for (size_t i = begin; i < end; ++i) {
        failedRow = i;
        decodeRecordInto(b.recs[i], b.x.data() + i * F, b.y[i]);
    }
    failedRow = SIZE_MAX;
    map_.nanos.fetch_add(nanosSince(t0), std::memory_order_relaxed);
    map_.items.fetch_add(static_cast<int64_t>(end - begin), std::memory_order_relaxed);
    map_.bytes.fetch_add(static_cast<int64_t>((end - begin) * F * sizeof(float)), std::memory_order_relaxed);
}

void StreamingPipeline::startDecode(BatchBuf& b) {
    const size_t F = static_cast<size_t>(example_size_);
    if (b.x.size() < static_cast<size_t>(batch_size_) * F) b.x.resize(static_cast<size_t>(batch_size_) * F);
    if (b.y.size() < static_cast<size_t>(batch_size_)) b.y.resize(static_cast<size_t>(batch_size_));
    if (pool_) {
        map_.fillSumMilli.fetch_add(static_cast<int64_t>(std::min<size_t>(1000, 1000 * pool_->queued() /
                                                          std::max<size_t>(1, 2 * static_cast<size_t>(choice_.map_parallel_calls)))),
                                    std::memory_order_relaxed);
        map_.fillSamples.fetch_add(1, std::memory_order_relaxed);
        pool_->submit(b);
        return;
    }
    // One decode call: here, in order. An error is kept with the batch so the batches before it
    // are still delivered first.
    b.error = nullptr;
    size_t row = SIZE_MAX;
    try {
        decodeRows(b, 0, static_cast<size_t>(b.count), row);
    } catch (...) {
        b.error = std::current_exception();
    }
}

void StreamingPipeline::finishDecode(BatchBuf& b) {
    if (pool_) pool_->helpUntilDone(b);
    if (b.error) std::rethrow_exception(b.error);
}

// ---- Epoch stream: list files -> interleave -------------------------------------------------------

void StreamingPipeline::beginEpochStream(int64_t epoch) {
    endEpochStream();
    streamEpoch_ = epoch;
    recordIndex_ = 0;
    inputDone_ = false;
    shufCount_ = 0;
    epochExamples_ = 0;
    cachePos_ = 0;
    consumerReadNanos_ = 0;
    shufRng_ = Rng(deriveSeed(seed_, kSeedShuffleBuffer, static_cast<uint64_t>(epoch)));
    if (data_.pipeline.cache && cacheComplete_) return;  // served from memory: no files to read
    if (data_.pipeline.cache) cache_.clear();

    if (preparedEpoch_ == epoch) {
        slots_ = std::move(preparedSlots_);  // opened while the last epoch drained its shuffle buffer
        preparedEpoch_ = -1;
    } else {
        slots_ = makeSlots(epoch);
    }
    nextSlot_ = 0;
    liveSlots_ = slots_.size();
}

void StreamingPipeline::prepareEpoch(int64_t epoch) {
    if (!choice_.parallel_reads || data_.pipeline.cache || preparedEpoch_ == epoch) return;
    preparedSlots_ = makeSlots(epoch);
    preparedEpoch_ = epoch;
}

std::vector<std::unique_ptr<StreamingPipeline::Slot>> StreamingPipeline::makeSlots(int64_t epoch) {
    const PipelineConfig& p = data_.pipeline;
    std::vector<uint32_t> files;
    for (uint32_t i = 0; i < source_.files.size(); ++i)
        if (p.shard_by != "file" || static_cast<int64_t>(i) % p.shard_count == p.shard_index) files.push_back(i);
    if (p.shuffle_files && shuffle_) {
        Rng rng(deriveSeed(seed_, kSeedFiles, static_cast<uint64_t>(epoch)));
        for (size_t i = files.size(); i > 1; --i) std::swap(files[i - 1], files[rng.below(i)]);
    }
    const size_t cycle = std::min<size_t>(static_cast<size_t>(choice_.cycle_length), files.size());
    std::vector<std::unique_ptr<Slot>> slots;
    for (size_t s = 0; s < cycle; ++s) {
        auto slot = std::make_unique<Slot>();
        for (size_t k = s; k < files.size(); k += cycle) slot->files.push_back(files[k]);
        slots.push_back(std::move(slot));
    }
    if (!choice_.parallel_reads) return slots;
    for (auto& sp : slots) {
        Slot* slot = sp.get();
        slot->thread = std::thread([this, slot] {
            setThreadName("tb-read");
            try {
                for (uint32_t f : slot->files) {
                    auto t0 = Clock::now();
                    std::unique_ptr<FileRecordReader> reader;
                    {
                        TB_ZONE("pipeline", "read (open file)");
                        reader = openReader(f);
                    }
                    int64_t skippedSeen = 0;
                    read_.nanos.fetch_add(nanosSince(t0), std::memory_order_relaxed);
                    for (bool more = true; more;) {
                        std::unique_ptr<RecordChunk> chunk;
                        {
                            std::lock_guard<std::mutex> lock(slot->m);
                            if (slot->stop) return;
                            if (!slot->empty.empty()) {
                                chunk = std::move(slot->empty.back());
                                slot->empty.pop_back();
                            }
                        }
                        if (!chunk) {
                            chunk = std::make_unique<RecordChunk>();
                            chunk->recs.resize(kReadChunkRecords);
                        }
                        t0 = Clock::now();
                        chunk->n = 0;
                        size_t bytes = 0;
                        while (chunk->n < kReadChunkRecords && bytes < kReadChunkBytes) {
                            Record& r = chunk->recs[chunk->n];
                            if (!reader->next(r)) {
                                more = false;
                                break;
                            }
                            bytes += r.data.size();
                            ++chunk->n;
                        }
                        read_.nanos.fetch_add(nanosSince(t0), std::memory_order_relaxed);
                        read_.items.fetch_add(static_cast<int64_t>(chunk->n), std::memory_order_relaxed);
                        read_.bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
                        // Skipped records count as soon as they are skipped, not at the end of the file.
                        if (const int64_t sk = reader->skipped(); sk != skippedSeen) {
                            skipped_.fetch_add(sk - skippedSeen, std::memory_order_relaxed);
                            skippedSeen = sk;
                        }
                        if (chunk->n == 0) continue;
                        std::unique_lock<std::mutex> lock(slot->m);
                        slot->cv.wait(lock, [&] { return slot->stop || slot->full.size() < kSlotQueueChunks; });
                        if (slot->stop) return;
                        slot->full.push_back(std::move(chunk));
                        slot->cv.notify_all();
                    }
                }
            } catch (...) {
                std::lock_guard<std::mutex> lock(slot->m);
                slot->error = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(slot->m);
            slot->done = true;
            slot->cv.notify_all();
        });
    }
    return slots;
}

void StreamingPipeline::stopSlots(std::vector<std::unique_ptr<Slot>>& slots) {
    for (auto& slot : slots) {
        {
            std::lock_guard<std::mutex> lock(slot->m);
            slot->stop = true;
        }
        slot->cv.notify_all();
        if (slot->thread.joinable()) slot->thread.join();
    }
    slots.clear();
}

void StreamingPipeline::endEpochStream() {
    stopSlots(slots_);
    liveSlots_ = 0;
    // Batches still being decoded must finish before their buffers are reused or freed.
    for (auto& b : decoding_) {
        if (pool_) pool_->wait(*b);
        std::lock_guard<std::mutex> lock(qMutex_);
        freeBatches_.push_back(std::move(b));
    }
    decoding_.clear();
}

bool StreamingPipeline::nextRecord(Record& out) {
    const PipelineConfig& p = data_.pipeline;
    while (liveSlots_ > 0) {
        Slot& s = *slots_[nextSlot_];
        nextSlot_ = (nextSlot_ + 1) % slots_.size();
        if (s.exhausted) continue;
        bool got = false;
        if (!choice_.parallel_reads) {
            while (!got) {
                if (!s.reader) {
                    if (s.cursor >= s.files.size()) break;
                    const auto t0 = Clock::now();
                    TB_ZONE("pipeline", "read (open file)");
                    s.reader = openReader(s.files[s.cursor++]);
                    const int64_t ns = nanosSince(t0);
                    read_.nanos.fetch_add(ns, std::memory_order_relaxed);
                    consumerReadNanos_ += ns;
                }
                const auto t0 = Clock::now();
                got = s.reader->next(out);
                const int64_t ns = nanosSince(t0);
                read_.nanos.fetch_add(ns, std::memory_order_relaxed);
                consumerReadNanos_ += ns;
                if (const int64_t sk = s.reader->skipped(); sk != s.skippedSeen) {
                    skipped_.fetch_add(sk - s.skippedSeen, std::memory_order_relaxed);
                    s.skippedSeen = sk;
                }
                if (got) {
                    read_.items.fetch_add(1, std::memory_order_relaxed);
                    read_.bytes.fetch_add(static_cast<int64_t>(out.data.size()), std::memory_order_relaxed);
                } else {
                    s.reader.reset();
                    s.skippedSeen = 0;
                }
            }
        } else {
            while (!got) {
                if (s.cur && s.curPos < s.cur->n) {
                    std::swap(out, s.cur->recs[s.curPos++]);  // the old buffer goes back to the reader
                    got = true;
                    break;
                }
                const auto waitStart = Clock::now();
                std::unique_lock<std::mutex> lock(s.m);
                if (s.cur) s.empty.push_back(std::move(s.cur));
                read_.fillSumMilli.fetch_add(static_cast<int64_t>(1000 * s.full.size() / kSlotQueueChunks),
                                             std::memory_order_relaxed);
                read_.fillSamples.fetch_add(1, std::memory_order_relaxed);
                s.cv.wait(lock, [&] { return !s.full.empty() || s.done; });
                consumerReadNanos_ += nanosSince(waitStart);
                if (!s.full.empty()) {
                    s.cur = std::move(s.full.front());
                    s.full.pop_front();
                    s.curPos = 0;
                    s.cv.notify_all();
                } else {
                    if (s.error) std::rethrow_exception(s.error);
                    break;
                }
            }
        }
        if (!got) {
            s.exhausted = true;
            --liveSlots_;
            continue;
        }
        const int64_t index = recordIndex_++;
        if (p.shard_by == "element" && p.shard_count > 1 && index % p.shard_count != p.shard_index) continue;
        return true;
    }
    return false;
}

// ---- cache -> shuffle -> batch --------------------------------------------------------------------

bool StreamingPipeline::nextInput(Record& out) {
    if (data_.pipeline.cache && cacheComplete_) {
        if (cachePos_ >= cache_.size()) return false;
        out = cache_[cachePos_++];  // copies into out's buffer, keeping its capacity
        return true;
    }
    if (!nextRecord(out)) return false;
    if (data_.pipeline.cache) cache_.push_back(out);
    return true;
}

bool StreamingPipeline::nextShuffled(Record& out) {
    if (shufCap_ == 0) {
        if (nextInput(out)) return true;
        if (choice_.prefetch > 0) prepareEpoch(streamEpoch_ + 1);
        return false;
    }
    while (!inputDone_ && shufCount_ < shufCap_) {
        if (!nextInput(shufBuf_[static_cast<size_t>(shufCount_)])) {
            inputDone_ = true;
            // Open the next epoch's files while this one drains its buffer (repeat overlaps).
            if (choice_.prefetch > 0) prepareEpoch(streamEpoch_ + 1);
            break;
        }
        ++shufCount_;
    }
    if (shufCount_ == 0) return false;
    // tf.data's shuffle: hand out a random element of the buffer and put the next input in its place.
    // Records move by swapping strings, so no bytes are copied and buffers keep their capacity.
    const size_t r = static_cast<size_t>(shufRng_.below(static_cast<uint64_t>(shufCount_)));
    std::swap(out, shufBuf_[r]);
    if (inputDone_ || !nextInput(shufBuf_[r])) {
        if (!inputDone_ && choice_.prefetch > 0) prepareEpoch(streamEpoch_ + 1);
        inputDone_ = true;
        const size_t last = static_cast<size_t>(--shufCount_);
        if (r != last) std::swap(shufBuf_[r], shufBuf_[last]);
    }
    return true;
}

int64_t StreamingPipeline::gatherBatch(BatchBuf& b) {
    TB_ZONE("pipeline", "gather batch (read, shuffle)");
    const auto t0 = Clock::now();
    const int64_t readBefore = consumerReadNanos_;
    if (b.recs.size() < static_cast<size_t>(batch_size_)) b.recs.resize(static_cast<size_t>(batch_size_));
    int64_t n = 0;
    while (n < batch_size_ && nextShuffled(b.recs[static_cast<size_t>(n)])) ++n;
    // Time spent here that was not reading: moving records through the shuffle buffer (or, without
    // shuffling, gathering them into the batch).
    const int64_t own = nanosSince(t0) - (consumerReadNanos_ - readBefore);
    (shufCap_ > 0 ? shuffleC_ : batch_).nanos.fetch_add(std::max<int64_t>(0, own), std::memory_order_relaxed);
    if (shufCap_ > 0) {
        shuffleC_.fillSumMilli.fetch_add(1000 * shufCount_ / shufCap_, std::memory_order_relaxed);
        shuffleC_.fillSamples.fetch_add(1, std::memory_order_relaxed);
        shuffleC_.items.fetch_add(n, std::memory_order_relaxed);
    }
    epochExamples_ += n;
    if (n < batch_size_) {
        // The epoch's input is exhausted: record its size (the cache, if on, is now complete).
        if (data_.pipeline.cache) cacheComplete_ = true;
        knownExamples_.store(epochExamples_, std::memory_order_relaxed);
        if (drop_remainder_) n = 0;
    }
    b.count = n;
    b.endOfEpoch = false;
    if (n > 0) {
        batch_.items.fetch_add(1, std::memory_order_relaxed);
        batch_.bytes.fetch_add(n * example_size_ * static_cast<int64_t>(sizeof(float)), std::memory_order_relaxed);
    }
    return n;
}

// ---- prefetch (repeat) --------------------------------------------------------------------------------

std::unique_ptr<StreamingPipeline::BatchBuf> StreamingPipeline::takeFreeBatch() {
    std::lock_guard<std::mutex> lock(qMutex_);
    if (freeBatches_.empty()) return std::make_unique<BatchBuf>();
    auto b = std::move(freeBatches_.back());
    freeBatches_.pop_back();
    return b;
}

void StreamingPipeline::producerLoop() {
    setThreadName("tb-prefetch");
    // Batches being decoded: gathering batch k+1 overlaps decoding batch k.
    constexpr size_t kDecodingBatches = 2;
    try {
        for (int64_t epoch = 0;; ++epoch) {
            beginEpochStream(epoch);
            for (;;) {
                {
                    std::lock_guard<std::mutex> lock(qMutex_);
                    if (stop_) return;
                }
                auto buf = takeFreeBatch();
                int64_t n = 0;
                std::exception_ptr readError;
                try {
                    n = gatherBatch(*buf);
                } catch (...) {
                    // Deliver the batches gathered before the bad record first, then fail.
                    readError = std::current_exception();
                    n = 0;
                }
                if (n > 0) {
                    startDecode(*buf);
                    decoding_.push_back(std::move(buf));
                } else {
                    std::lock_guard<std::mutex> lock(qMutex_);
                    freeBatches_.push_back(std::move(buf));
                }
                const bool last = n < batch_size_;
                while (!decoding_.empty() && (last || decoding_.size() >= kDecodingBatches)) {
                    finishDecode(*decoding_.front());
                    std::unique_lock<std::mutex> lock(qMutex_);
                    if (!stop_ && readyBatches_ >= choice_.prefetch) {
                        producerWaiting_ = true;
                        spaceCv_.wait(lock, [&] { return stop_ || readyBatches_ < choice_.prefetch; });
                        producerWaiting_ = false;
                    }
                    if (stop_) return;
                    ready_.push_back(std::move(decoding_.front()));
                    decoding_.pop_front();
                    ++readyBatches_;
                    // Wake the trainer only if it waits: a futex wake per batch would hand the core
                    // back and forth with the compute threads for nothing.
                    if (consumerWaiting_) qCv_.notify_one();
                }
                if (readError) std::rethrow_exception(readError);
                if (last) break;
            }
            endEpochStream();
            auto marker = std::make_unique<BatchBuf>();
            marker->endOfEpoch = true;
            std::lock_guard<std::mutex> lock(qMutex_);
            ready_.push_back(std::move(marker));
            qCv_.notify_all();
        }
    } catch (...) {
        std::lock_guard<std::mutex> lock(qMutex_);
        error_ = std::current_exception();
        qCv_.notify_all();
    }
}

void StreamingPipeline::startEpoch(int64_t epoch) {
    consumerEpoch_ = epoch;
    if (choice_.prefetch > 0 && !producer_.joinable()) producer_ = std::thread([this] { producerLoop(); });
}

BatchView StreamingPipeline::next() {
    const auto t0 = Clock::now();
    BatchView view;
    if (choice_.prefetch == 0) {
        if (streamEpoch_ != consumerEpoch_) beginEpochStream(consumerEpoch_);
        if (gatherBatch(*handed_) > 0) {
            startDecode(*handed_);
            finishDecode(*handed_);
            view = {handed_->x.data(), handed_->y.data(), handed_->count};
        } else {
            endEpochStream();
        }
    } else {
        std::unique_lock<std::mutex> lock(qMutex_);
        if (handed_ && handed_->count > 0) freeBatches_.push_back(std::move(handed_));
        prefetch_.fillSumMilli.fetch_add(1000 * std::min(readyBatches_, choice_.prefetch) / choice_.prefetch,
                                         std::memory_order_relaxed);
        static constexpr prof::ZoneSite kReady{"prefetch queue (batches ready)", "pipeline"};
        prof::counter(&kReady, static_cast<double>(readyBatches_));
        prefetch_.fillSamples.fetch_add(1, std::memory_order_relaxed);
        if (ready_.empty() && !error_) {
            consumerWaiting_ = true;
            qCv_.wait(lock, [&] { return !ready_.empty() || error_; });
            consumerWaiting_ = false;
        }
        if (ready_.empty() && error_) std::rethrow_exception(error_);
        handed_ = std::move(ready_.front());
        ready_.pop_front();
        if (!handed_->endOfEpoch) --readyBatches_;
        // Wake the producer when the queue is half empty, so it refills in bursts.
        if (producerWaiting_ && readyBatches_ <= choice_.prefetch / 2) spaceCv_.notify_one();
        if (!handed_->endOfEpoch) view = {handed_->x.data(), handed_->y.data(), handed_->count};
    }
    prefetch_.nanos.fetch_add(nanosSince(t0), std::memory_order_relaxed);
    if (view.count > 0) prefetch_.items.fetch_add(1, std::memory_order_relaxed);
    return view;
}

int64_t StreamingPipeline::examplesPerEpoch() const {
    const int64_t n = knownExamples_.load(std::memory_order_relaxed);
    return drop_remainder_ ? n / batch_size_ * batch_size_ : n;
}

int64_t StreamingPipeline::batchesPerEpoch() const {
    const int64_t n = knownExamples_.load(std::memory_order_relaxed);
    return drop_remainder_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

PipelineStats StreamingPipeline::stats() const {
    PipelineStats s;
    auto stage = [](const char* name, const Counters& c, int64_t capacity) {
        StageStats st;
        st.name = name;
        st.seconds = static_cast<double>(c.nanos.load(std::memory_order_relaxed)) * 1e-9;
        st.items = c.items.load(std::memory_order_relaxed);
        st.bytes = c.bytes.load(std::memory_order_relaxed);
        st.fill_sum = static_cast<double>(c.fillSumMilli.load(std::memory_order_relaxed)) * 1e-3;
        st.fill_samples = c.fillSamples.load(std::memory_order_relaxed);
        st.capacity = capacity;
        return st;
    };
    s.stages.push_back(stage("read", read_, choice_.parallel_reads ? static_cast<int64_t>(kSlotQueueChunks * kReadChunkRecords) : 0));
    s.stages.push_back(stage("map", map_, pool_ ? 2 * choice_.map_parallel_calls : 0));
    s.stages.push_back(stage("shuffle", shuffleC_, shufCap_));
    s.stages.push_back(stage("batch", batch_, 0));
    s.stages.push_back(stage("prefetch", prefetch_, choice_.prefetch));
    s.storage = storage_->stats();
    s.skipped_records = skipped_.load(std::memory_order_relaxed);
    return s;
}

// ---- Labels of every record (data.fraction) ----------------------------------------------------------

std::vector<std::vector<int32_t>> StreamingPipeline::readLabels() {
    std::vector<std::vector<int32_t>> out(source_.files.size());
    for (uint32_t f = 0; f < source_.files.size(); ++f) {
        if (source_.format == RecordFormat::kImageFile) {
            out[f] = {source_.labels[f]};
            continue;
        }
        // The file's own records, not a subset of them: positions must be the reader's.
        std::unique_ptr<FileRecordReader> reader = openFileReader(f);
        Record r;
        Sample sample;
        while (reader->next(r)) {
            decodeRecord(r, sample);
            out[f].push_back(sample.label);
        }
    }
    return out;
}

// ---- Whole split into memory ------------------------------------------------------------------------

EvalSet StreamingPipeline::readAll(const DataConfig& data, SourceFiles source, std::shared_ptr<Storage> storage) {
    DataConfig d = data;
    d.pipeline.shard_count = 1;
    d.pipeline.shard_index = 0;
    d.pipeline.cache = false;
    PipelineChoice c;
    // Many readers: the split is read once, and slow storage (small files) pays per open.
    c.cycle_length = std::min<int64_t>(64, static_cast<int64_t>(source.files.size()));
    c.parallel_reads = c.cycle_length > 1;
    c.map_parallel_calls = std::max<int64_t>(1, std::thread::hardware_concurrency());
    c.prefetch = 0;
    EvalSet out;
    out.source = source.description;
    StreamingPipeline p(d, std::move(source), 1024, /*shuffle=*/false, /*drop_remainder=*/false, 0, c, std::move(storage));
    out.channels = p.channels();
    out.height = p.height();
    out.width = p.width();
    p.startEpoch(0);
    for (BatchView b = p.next(); b.count > 0; b = p.next()) {
        out.x.insert(out.x.end(), b.x, b.x + b.count * p.exampleSize());
        out.labels.insert(out.labels.end(), b.y, b.y + b.count);
        out.count += b.count;
    }
    for (int32_t y : out.labels) out.num_classes = std::max<int64_t>(out.num_classes, int64_t{y} + 1);
    return out;
}

// ---- Autotune ---------------------------------------------------------------------------------------

PipelineChoice StreamingPipeline::autotune(const DataConfig& data, const SourceFiles& source, int64_t batch_size,
                                           uint64_t seed, std::shared_ptr<Storage> storage, double budget_seconds) {
    const auto start = Clock::now();
    const int64_t files = static_cast<int64_t>(source.files.size()) /
                          (data.pipeline.shard_by == "file" ? std::max<int64_t>(1, data.pipeline.shard_count) : 1);
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    struct Trial {
        PipelineChoice c;
        double batchesPerSecond = 0;
        std::vector<double> batchSeconds;
    };
    // Each candidate makes batches for a fixed slice of the budget (after one warm-up batch) and is
    // scored by batches per second. Candidates are measured on a fresh pipeline, so a file-open cost
    // is paid as it will be in training.
    const int trialsPlanned = 8;
    const double slice = budget_seconds / trialsPlanned;
    std::string notes;
    auto measure = [&](PipelineChoice c) {
        Trial t;
        t.c = c;
        StreamingPipeline p(data, source, batch_size, false, false, seed, c, storage);
        p.startEpoch(0);
        int64_t epoch = 0;
        auto nextBatch = [&] {
            BatchView b = p.next();
            if (b.count == 0) {
                p.startEpoch(++epoch);
                b = p.next();
            }
            return b;
        };
        nextBatch();  // warm-up: first opens, first chunk
        const auto t0 = Clock::now();
        int64_t n = 0;
        for (;;) {
            const auto b0 = Clock::now();
            if (nextBatch().count == 0) break;
            t.batchSeconds.push_back(std::chrono::duration<double>(Clock::now() - b0).count());
            ++n;
            const double el = std::chrono::duration<double>(Clock::now() - t0).count();
            if (el >= slice && n >= 3) {
                t.batchesPerSecond = static_cast<double>(n) / el;
                break;
            }
        }
        char line[160];
        std::snprintf(line, sizeof line, "cycle_length %lld%s, map_parallel_calls %lld: %.1f batches/s\n",
                      static_cast<long long>(c.cycle_length), c.parallel_reads ? " (parallel)" : "",
                      static_cast<long long>(c.map_parallel_calls), t.batchesPerSecond);
        notes += line;
        return t;
    };
    // 1. Parallel reads: double the cycle length while it buys at least 10 %.
    PipelineChoice c;
    c.prefetch = 0;
    c.map_parallel_calls = 1;
    c.cycle_length = 1;
    c.parallel_reads = false;
    Trial best = measure(c);
    for (int64_t cycle = 2; cycle <= std::min<int64_t>(files, 64); cycle *= 2) {
        c.cycle_length = cycle;
        c.parallel_reads = true;
        Trial t = measure(c);
        if (t.batchesPerSecond < best.batchesPerSecond * 1.1) break;
        best = t;
    }
    // 2. Map parallelism, up to the core count, kept only if it buys at least 10 %.
    c = best.c;
    for (int64_t calls = 2; calls <= cores; calls *= 2) {
        c.map_parallel_calls = calls;
        Trial t = measure(c);
        if (t.batchesPerSecond < best.batchesPerSecond * 1.1) break;
        best = t;
    }
    // 3. Prefetch: deep enough to ride out the slowest batches (p95 / median production time).
    std::vector<double> v = best.batchSeconds;
    int64_t depth = 2;
    if (v.size() >= 3) {
        std::sort(v.begin(), v.end());
        const double med = v[v.size() / 2], p95 = v[std::min(v.size() - 1, v.size() * 95 / 100)];
        if (med > 0) depth = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(p95 / med)) + 1, 2, 16);
    }
    PipelineChoice out = best.c;
    out.prefetch = depth;
    out.autotuned = true;
    out.autotune_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out.notes = notes + "prefetch " + std::to_string(depth) + " (batch time p95/median)";
    return out;
}

}  // namespace trainbench::engine
