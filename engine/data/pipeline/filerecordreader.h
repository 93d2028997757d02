#pragma once
// One file's records as the interleave stage reads them: a TFRecord file, a CSV file, a file that
// is one record (an image or one serialized Example), or the data.fraction subset of another reader.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/data/pipeline/element.h"
#include "engine/data/records/tfrecord.h"
#include "engine/data/sources/csv.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

class FileRecordReader {
public:
    virtual ~FileRecordReader() = default;
    // The next record, with its file index and byte offset; false at the end of the file. Throws
    // DataError for a corrupt record unless the reader skips them.
    virtual bool next(Record& r) = 0;
    virtual int64_t skipped() const { return 0; }  // corrupt records skipped so far
    // CSV: the columns the file's header named (known once the reader is open); others: none.
    virtual const CsvLayout* csvLayout() const { return nullptr; }
};

std::unique_ptr<FileRecordReader> tfRecordFileReader(std::unique_ptr<StorageFile> f, Compression c, bool skipCorrupt,
                                                     uint32_t file);
std::unique_ptr<FileRecordReader> csvFileReader(std::unique_ptr<StorageFile> f, const CsvOptions& o, uint32_t file);
// The whole file as one record of `format` (with `label`, or -1 when the record carries its own).
std::unique_ptr<FileRecordReader> wholeFileReader(std::unique_ptr<StorageFile> f, RecordFormat format, int64_t label,
                                                  uint32_t file);
// data.fraction: only the records of `inner` whose position (among the records it yields; skipped
// corrupt records have none) is set in `keep`, which must outlive the reader; stops after the last.
std::unique_ptr<FileRecordReader> subsetReader(std::unique_ptr<FileRecordReader> inner, const std::vector<bool>& keep);

}  // namespace trainbench::engine
