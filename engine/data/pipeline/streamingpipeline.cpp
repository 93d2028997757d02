#include "engine/data/pipeline/streamingpipeline.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "engine/data/pipeline/streamingparts.h"
#include "engine/data/records/example.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/instrument/instrument.h"
#include "engine/util/errors.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

using namespace streaming;

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
    if (p.shard_by == ShardBy::File && p.shard_count > static_cast<int64_t>(source_.files.size()))
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
        return subsetReader(std::move(reader), source_.keep[fileIndex]);
    return reader;
}

std::unique_ptr<FileRecordReader> StreamingPipeline::openFileReader(uint32_t fileIndex) {
    const std::string& path = source_.files[fileIndex];
    switch (source_.format) {
        case RecordFormat::kExample:
            if (data_.dataset == "example_files")
                return wholeFileReader(storage_->open(path), RecordFormat::kExample, -1, fileIndex);
            return tfRecordFileReader(storage_->open(path), parseCompression(data_.pipeline.compression),
                                      data_.pipeline.skip_corrupt, fileIndex);
        case RecordFormat::kCsvLine: {
            auto r = csvFileReader(storage_->open(path), data_.csv, fileIndex);
            std::call_once(csvLayoutOnce_[fileIndex], [&] { csvLayouts_[fileIndex] = *r->csvLayout(); });
            return r;
        }
        case RecordFormat::kImageFile:
            return wholeFileReader(storage_->open(path), RecordFormat::kImageFile, source_.labels[fileIndex], fileIndex);
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
                        // The trainer does not wake this thread when it takes a batch (consumerpace.h).
                        producerWaiting_ = true;
                        while (!stop_ && readyBatches_ >= choice_.prefetch) spaceCv_.wait_for(lock, pace_.poll());
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
        pace_.taken(t0);
        if (ready_.empty() && !error_) {
            if (producerWaiting_) spaceCv_.notify_one();  // waiting anyway: the wake costs no step time
            consumerWaiting_ = true;
            qCv_.wait(lock, [&] { return !ready_.empty() || error_; });
            consumerWaiting_ = false;
        }
        if (ready_.empty() && error_) std::rethrow_exception(error_);
        handed_ = std::move(ready_.front());
        ready_.pop_front();
        if (!handed_->endOfEpoch) --readyBatches_;
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

}  // namespace trainbench::engine
