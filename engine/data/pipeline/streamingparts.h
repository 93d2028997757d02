#pragma once
// The streaming pipeline's own parts, shared by its source files (streamingpipeline.cpp,
// interleave.cpp, pipelineautotune.cpp): not for use outside the pipeline.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/data/pipeline/filerecordreader.h"
#include "engine/data/pipeline/streamingpipeline.h"

namespace trainbench::engine::streaming {

using Clock = std::chrono::steady_clock;

inline int64_t nanosSince(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// Records handed from a reader thread to the pipeline in one go (one lock per chunk, not per record).
constexpr size_t kReadChunkRecords = 64;
constexpr size_t kReadChunkBytes = 1 << 20;
constexpr size_t kSlotQueueChunks = 16;  // chunks a reader thread may run ahead
// Records decoded by one map call.
constexpr size_t kMapChunkRecords = 32;

struct RecordChunk {
    std::vector<Record> recs;
    size_t n = 0;
};

}  // namespace trainbench::engine::streaming

namespace trainbench::engine {

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
    std::deque<std::unique_ptr<streaming::RecordChunk>> full;
    std::vector<std::unique_ptr<streaming::RecordChunk>> empty;
    bool done = false, stop = false;
    std::exception_ptr error;
    std::unique_ptr<streaming::RecordChunk> cur;  // consumer side
    size_t curPos = 0;
};

}  // namespace trainbench::engine
