#pragma once
// CSV sources: numeric feature columns plus one integer label column, an optional header row.
// A CsvReader turns a file into Records (one per data line); decodeCsvLine parses one into a Sample.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/pipeline/element.h"
#include "engine/data/storage/storage.h"

namespace trainbench::engine {

struct CsvOptions {
    char delimiter = ',';
    std::string header = "auto";  // "auto" (a first line with a non-numeric field is a header), "yes", "no"
    std::string label_column;     // header name or 0-based index; empty = the last column
};

// What the first lines of a file said: column count, where the label is, the header's names.
struct CsvLayout {
    int64_t columns = 0;
    int64_t label_index = 0;
    bool has_header = false;
    std::vector<std::string> names;  // from the header, empty without one
    int64_t features() const { return columns - 1; }
};

// Reads a CSV file line by line (CRLF or LF, a final line without newline, blank lines skipped).
// The constructor reads up to the first data line to fix the layout; throws DataError naming the
// file for an empty file, an unknown label column name, or an index out of range.
class CsvReader {
public:
    CsvReader(std::unique_ptr<StorageFile> file, const CsvOptions& options);
    ~CsvReader();
    const CsvLayout& layout() const;
    // Next data line as a Record (format kCsvLine, offset = 1-based line number); false at the end.
    bool next(Record& out);
    const std::string& path() const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Parses one data line: features as floats (no scaling), the label as an integer >= 0. Throws
// DataError "<path>:<line>: expected <C> columns, got <K>" for a wrong column count, and
// "<path>:<line>: column <i> ('<name>'): '<text>' is not a number" (or "not a label") for bad fields.
void decodeCsvLine(const Record& record, const CsvLayout& layout, Sample& out, const std::string& path);

}  // namespace trainbench::engine
