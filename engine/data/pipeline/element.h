#pragma once
// What flows through the input pipeline. Sources produce Records (one serialized example each, with
// where it came from); the parse/decode map turns a Record into a Sample (float features scaled as
// the model wants them, and an integer label); batch stacks Samples into a Batch.
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::engine {

// How a Record's bytes are to be decoded.
enum class RecordFormat : uint8_t {
    kExample,    // a serialized tf.train.Example (TFRecord shards)
    kCsvLine,    // one CSV data line (numeric columns + label column)
    kImageFile,  // a whole PNG or JPEG file, label given in Record::label (image folders)
};

struct Record {
    std::string data;        // the serialized example (reused between records to avoid allocations)
    int64_t label = -1;      // known label (image folders), -1 when the payload carries it
    uint32_t file = 0;       // index into the pipeline's file list
    uint64_t offset = 0;     // byte offset of the record in its file (line number for CSV)
    RecordFormat format = RecordFormat::kExample;
};

struct Sample {
    std::vector<float> x;  // features, NCHW for images, pixels scaled to [0, 1]
    int32_t label = 0;
    // The example's shape when its record says (Example "channels"/"height"/"width" features,
    // decoded images); 0 when it does not (CSV rows, Examples without them).
    int64_t channels = 0, height = 0, width = 0;
};

}  // namespace trainbench::engine
