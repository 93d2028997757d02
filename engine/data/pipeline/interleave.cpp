// The interleave stage: an epoch's files dealt to cycle_length slots, read inline or each slot on a
// reader thread of its own, and visited round robin (then element sharding).
#include <algorithm>
#include <utility>

#include "engine/data/pipeline/streamingparts.h"
#include "engine/instrument/instrument.h"
#include "engine/util/threadname.h"

namespace trainbench::engine {

using namespace streaming;

std::vector<std::unique_ptr<StreamingPipeline::Slot>> StreamingPipeline::makeSlots(int64_t epoch) {
    const PipelineConfig& p = data_.pipeline;
    std::vector<uint32_t> files;
    for (uint32_t i = 0; i < source_.files.size(); ++i)
        if (p.shard_by != ShardBy::File || static_cast<int64_t>(i) % p.shard_count == p.shard_index) files.push_back(i);
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
        if (p.shard_by == ShardBy::Element && p.shard_count > 1 && index % p.shard_count != p.shard_index) continue;
        return true;
    }
    return false;
}

}  // namespace trainbench::engine
