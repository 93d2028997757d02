#pragma once
// CSV sources: numeric feature columns plus one integer label column, an optional header row.
// A CsvReader turns a file into Records (one per data line); decodeCsvLine parses one into a Sample.
//
// Fields: blanks (spaces, tabs) around a field are ignored, and so is one pair of double quotes
// around it ("1.5" reads as 1.5), but a delimiter inside quotes is not supported: numeric CSV has
// none. A UTF-8 byte-order mark before the first line is skipped.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/pipeline/element.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

// Bytes per StorageFile::read of a CsvReader: each read is one emulated storage request, so
// reads are large (a buffered reader of a real object store would also fetch megabytes at a time).
inline constexpr int64_t kCsvReadChunkBytes = int64_t{1} << 20;

struct CsvOptions {
    char delimiter = ',';         // not '\n', '\r' or '"'
    std::string header = "auto";  // "auto" (a first line with a non-numeric field is a header), "yes", "no"
    std::string label_column;     // header name or 0-based index (digits only); empty = the last column
    int64_t read_chunk_bytes = kCsvReadChunkBytes;  // > 0; smaller only to test chunk boundaries
};

// What the first lines of a file said: column count, where the label is, the header's names.
struct CsvLayout {
    char delimiter = ',';
    int64_t columns = 0;
    int64_t label_index = 0;
    bool has_header = false;
    std::vector<std::string> names;  // from the header, empty without one
    int64_t features() const { return columns - 1; }
};

// Reads a CSV file line by line (CRLF or LF, a final line without newline, blank lines skipped).
// The constructor reads up to the first data line to fix the layout; throws DataError naming the
// file for an empty file (no non-blank line), a file of one column, an unknown label column name
// (or a name when there is no header, or a name the header holds twice), or an index out of range;
// std::invalid_argument for bad options. A header-only file is valid and yields no records. A line
// longer than 64 MiB is a DataError (a binary file given as CSV). Columns are the first line's fields.
class CsvReader {
public:
    CsvReader(std::unique_ptr<StorageFile> file, const CsvOptions& options);
    ~CsvReader();
    const CsvLayout& layout() const;
    // Next data line as a Record (format kCsvLine, offset = 1-based line number, label -1, data =
    // the line without its line end, reusing capacity; `file` is left as it is); false at the end.
    bool next(Record& out);
    const std::string& path() const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Parses one data line into `out` (reusing its capacity): features as floats in column order
// without the label column (no scaling), the label as an integer >= 0 and < 2^31. Throws DataError
//   "<path>:<line>: expected <C> columns, got <K>"                     for a wrong column count,
//   "<path>:<line>: column <i> ('<name>'): '<text>' is not a number"      for a bad feature,
//   "<path>:<line>: column <i> ('<name>'): '<text>' is not a finite number"  for nan, inf, or a
//                                                                     value beyond float's range,
//   "<path>:<line>: column <i> ('<name>'): '<text>' is not a label (an integer from 0 to 2147483647)"
// where <i> is the 0-based column, " ('<name>')" appears only with a header, and <text> is the
// field without surrounding blanks (cut to 64 bytes). Values too small for a float read as 0.
void decodeCsvLine(const Record& record, const CsvLayout& layout, Sample& out, const std::string& path);

}  // namespace trainbench::engine
