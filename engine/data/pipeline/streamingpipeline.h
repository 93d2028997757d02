#pragma once
// The streaming input pipeline (tf.data's vocabulary, fixed order; see PipelineConfig):
//
//   list files -> [shard by file] -> interleave (cycle_length files, one record from each in turn,
//   each file on its own reader thread when parallel_reads) -> [shard by element] -> [cache] ->
//   shuffle (a buffer of serialized records, seeded per epoch) -> map fused with batch (decoding on
//   map_parallel_calls threads straight into the batch's rows, tf.data's map-and-batch fusion;
//   drop_remainder) -> prefetch (a background thread keeps `prefetch` batches ready and runs on into
//   the next epoch, whose files it opens while the last one drains its shuffle buffer: repeat).
//
// The element order depends only on the files, the seed, the epoch and cycle_length, never on thread
// timing: file f of an epoch's list is read by interleave slot f % cycle_length, and the slots are
// visited round robin. Every file is read through a Storage, so emulated slow storage applies.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/data/pipeline/consumerpace.h"
#include "engine/data/pipeline/element.h"
#include "engine/data/pipeline/inputpipeline.h"
#include "engine/data/sources/csv.h"
#include "engine/util/rng.h"

namespace trainbench::engine {

// The files a source reads and how: the list files stage, resolved.
struct SourceFiles {
    RecordFormat format = RecordFormat::kExample;
    std::vector<std::string> files;
    std::vector<int32_t> labels;  // images: the class of each file (same length as files)
    std::string description;      // "16 TFRecord files matching /data/train-*.tfrecord"
    // data.fraction (trainsubset.h): per file, which of its records are read, by position among
    // the records its reader yields; an empty list (or no lists at all) reads every record.
    std::vector<std::vector<bool>> keep;
    int64_t examples = 0;  // records the files hold (after keep) when known without reading them; 0: not known
};

// Lists the train or test files of `data` (dataset tfrecord, csv, images or example_files).
// Throws DataError when nothing matches, naming the pattern.
SourceFiles listSourceFiles(const DataConfig& data, bool train, const Storage& storage);

class StreamingPipeline : public InputPipeline {
public:
    // Reads the first record to learn the example shape (Example shape features, image size, CSV
    // columns), so the model can be built before the first batch. Throws DataError for bad input.
    StreamingPipeline(const DataConfig& data, SourceFiles source, int64_t batch_size, bool shuffle,
                      bool drop_remainder, uint64_t seed, const PipelineChoice& choice,
                      std::shared_ptr<Storage> storage);
    ~StreamingPipeline() override;

    void startEpoch(int64_t epoch) override;
    BatchView next() override;
    int64_t batchesPerEpoch() const override;
    int64_t examplesPerEpoch() const override;
    int64_t sourceExamples() const override { return knownExamples_.load(std::memory_order_relaxed); }
    int64_t exampleSize() const override { return example_size_; }
    PipelineStats stats() const override;
    PipelineChoice choice() const override { return choice_; }

    int64_t channels() const { return channels_; }
    int64_t height() const { return height_; }
    int64_t width() const { return width_; }
    const SourceFiles& source() const { return source_; }

    // Measures candidate settings on this source for a bounded time (about `budget_seconds`) and
    // returns the fastest cheapest one: cycle_length (parallel reads), then map_parallel_calls, then a
    // prefetch depth sized to cover the burstiness of batch production.
    static PipelineChoice autotune(const DataConfig& data, const SourceFiles& source, int64_t batch_size,
                                   uint64_t seed, std::shared_ptr<Storage> storage, double budget_seconds = 3.0);

    // Every record's label, file by file in file order, by one sequential read of the whole
    // source (image folders: from the folder names, without reading). What data.fraction's
    // class-stratified subset is drawn from. Throws DataError like a training epoch would.
    std::vector<std::vector<int32_t>> readLabels();

    // Reads a whole split (no shuffle, one pass) into memory for evaluation.
    static EvalSet readAll(const DataConfig& data, SourceFiles source, std::shared_ptr<Storage> storage);

private:
    struct Slot;
    struct BatchBuf;
    class MapPool;

    // Producer side (the prefetch thread, or the trainer's thread when prefetch is 0).
    void beginEpochStream(int64_t epoch);
    void endEpochStream();
    // Starts the reader threads of `epoch` ahead of time (parallel reads, prefetching, no cache).
    void prepareEpoch(int64_t epoch);
    std::vector<std::unique_ptr<Slot>> makeSlots(int64_t epoch);
    static void stopSlots(std::vector<std::unique_ptr<Slot>>& slots);
    bool nextRecord(Record& out);    // interleave + element sharding
    bool nextInput(Record& out);     // cache, or nextRecord (filling the cache)
    bool nextShuffled(Record& out);  // through the shuffle buffer (or straight through)
    int64_t gatherBatch(BatchBuf& b);  // the next batch's records; 0 at the end of the epoch
    void startDecode(BatchBuf& b);     // map, fused with batch: rows decoded in place
    void finishDecode(BatchBuf& b);    // waits for it; rethrows the first failing row's error
    void decodeRows(BatchBuf& b, size_t begin, size_t end, size_t& failedRow);
    void decodeRecordInto(Record& r, float* dst, int32_t& label);
    void decodeRecord(Record& r, Sample& s);
    std::unique_ptr<class FileRecordReader> openReader(uint32_t fileIndex);      // the records read (keep applied)
    std::unique_ptr<class FileRecordReader> openFileReader(uint32_t fileIndex);  // every record of the file
    std::unique_ptr<BatchBuf> takeFreeBatch();
    void producerLoop();

    DataConfig data_;
    SourceFiles source_;
    int64_t batch_size_;
    bool shuffle_;
    bool drop_remainder_;
    uint64_t seed_;
    PipelineChoice choice_;
    std::shared_ptr<Storage> storage_;
    int64_t channels_ = 0, height_ = 0, width_ = 0, example_size_ = 0;
    std::vector<CsvLayout> csvLayouts_;  // per file, written by its first open before its first record
    std::unique_ptr<std::once_flag[]> csvLayoutOnce_;  // later opens (the next epoch's early readers,
                                                       // while rows of that file still decode) only read

    // Epoch stream state (producer side only).
    int64_t streamEpoch_ = -1;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<std::unique_ptr<Slot>> preparedSlots_;  // the next epoch's, already reading
    int64_t preparedEpoch_ = -1;
    size_t nextSlot_ = 0;
    size_t liveSlots_ = 0;
    int64_t recordIndex_ = 0;           // records seen this epoch (element sharding)
    int64_t consumerReadNanos_ = 0;     // time the producer spent reading or waiting for readers
    std::unique_ptr<MapPool> pool_;
    std::deque<std::unique_ptr<BatchBuf>> decoding_;
    // Cache (serialized records, so later epochs reshuffle and decode them again).
    std::vector<Record> cache_;
    bool cacheComplete_ = false;
    size_t cachePos_ = 0;
    // Shuffle buffer (serialized records).
    std::vector<Record> shufBuf_;
    int64_t shufCount_ = 0, shufCap_ = 0;
    Rng shufRng_{0};
    bool inputDone_ = false;
    int64_t epochExamples_ = 0;
    std::atomic<int64_t> knownExamples_{0};  // examples of a full epoch, once one has been seen

    // Prefetch (repeat): the producer thread and its queue.
    std::thread producer_;
    mutable std::mutex qMutex_;
    std::condition_variable qCv_;     // to the trainer: a batch (or an error) is ready
    std::condition_variable spaceCv_;  // to the producer: there is room in the queue
    std::deque<std::unique_ptr<BatchBuf>> ready_;
    int64_t readyBatches_ = 0;  // in ready_, end-of-epoch markers not counted
    bool producerWaiting_ = false, consumerWaiting_ = false;
    ConsumerPace pace_;  // the trainer's time between batches, for the producer's polls
    std::vector<std::unique_ptr<BatchBuf>> freeBatches_;
    std::unique_ptr<BatchBuf> handed_;  // the batch the trainer holds
    std::exception_ptr error_;
    bool stop_ = false;
    int64_t consumerEpoch_ = -1;

    // Stats (atomics: written by pipeline threads, read by the trainer).
    struct Counters {
        std::atomic<int64_t> nanos{0}, items{0}, bytes{0}, fillSumMilli{0}, fillSamples{0};
    };
    mutable Counters read_, map_, shuffleC_, batch_, prefetch_;
    std::atomic<int64_t> skipped_{0};
};

}  // namespace trainbench::engine
