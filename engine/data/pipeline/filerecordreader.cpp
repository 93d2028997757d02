#include "engine/data/pipeline/filerecordreader.h"

#include <utility>

namespace trainbench::engine {

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
    const CsvLayout* csvLayout() const override { return &reader_.layout(); }
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

std::unique_ptr<FileRecordReader> tfRecordFileReader(std::unique_ptr<StorageFile> f, Compression c, bool skipCorrupt,
                                                     uint32_t file) {
    return std::make_unique<TfRecordFileReader>(std::move(f), c, skipCorrupt, file);
}

std::unique_ptr<FileRecordReader> csvFileReader(std::unique_ptr<StorageFile> f, const CsvOptions& o, uint32_t file) {
    return std::make_unique<CsvFileReader>(std::move(f), o, file);
}

std::unique_ptr<FileRecordReader> wholeFileReader(std::unique_ptr<StorageFile> f, RecordFormat format, int64_t label,
                                                  uint32_t file) {
    return std::make_unique<WholeFileReader>(std::move(f), format, label, file);
}

std::unique_ptr<FileRecordReader> subsetReader(std::unique_ptr<FileRecordReader> inner, const std::vector<bool>& keep) {
    return std::make_unique<SubsetReader>(std::move(inner), keep);
}

}  // namespace trainbench::engine
