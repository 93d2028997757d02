// What a streaming source reads: its files listed, every record's label (for data.fraction), or the
// whole split read into memory for evaluation.
#include <algorithm>
#include <thread>
#include <utility>

#include "engine/data/pipeline/filerecordreader.h"
#include "engine/data/pipeline/streamingpipeline.h"
#include "engine/data/sources/imagefolder.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

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

}  // namespace trainbench::engine
