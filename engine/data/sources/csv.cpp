#include "engine/data/sources/csv.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "engine/util/errors.h"

namespace trainbench::engine {
namespace {

// Past this a "line" is a binary file read as CSV; stop before buffering all of it.
constexpr size_t kMaxLineBytes = size_t{64} << 20;
constexpr size_t kMaxQuotedBytes = 64;  // of a bad field, in an error message
constexpr size_t kMaxNamesListed = 8;   // header names in an "unknown label column" message

bool isBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view stripBlanks(std::string_view f) {
    while (!f.empty() && isBlank(f.front())) f.remove_prefix(1);
    while (!f.empty() && isBlank(f.back())) f.remove_suffix(1);
    return f;
}

// The value of a field: without surrounding blanks and one pair of surrounding double quotes.
std::string_view fieldValue(std::string_view f) {
    f = stripBlanks(f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = stripBlanks(f.substr(1, f.size() - 2));
    return f;
}

bool allDigits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// True when a number too large even for a double is really a tiny one ("1e-400", "0.000…1").
bool tinyMagnitude(std::string_view s) {
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
    const size_t e = s.find_first_of("eE");
    if (e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-') return true;
    const std::string_view mantissa = s.substr(0, e);
    const size_t dot = mantissa.find('.');
    const std::string_view whole = mantissa.substr(0, dot);
    return std::all_of(whole.begin(), whole.end(), [](char c) { return c == '0'; });
}

enum class Parsed { kOk, kNotNumber, kNotFinite };

// A feature value (already stripped by fieldValue).
Parsed parseFloat(std::string_view s, float& out) {
    // Whole numbers of up to 7 digits (pixels, counts) are exact in a float: skip from_chars.
    if (!s.empty() && s.size() <= 7) {
        uint32_t v = 0;
        bool digits = true;
        for (char c : s) {
            const unsigned d = static_cast<unsigned char>(c) - unsigned{'0'};
            if (d > 9) {
                digits = false;
                break;
            }
            v = v * 10 + d;
        }
        if (digits) {
            out = static_cast<float>(v);
            return Parsed::kOk;
        }
    }
    const char* b = s.data();
    const char* e = b + s.size();
    if (b != e && *b == '+') {  // from_chars takes no '+'
        ++b;
        if (b != e && (*b == '+' || *b == '-')) return Parsed::kNotNumber;
    }
    const auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
    if (ec == std::errc::invalid_argument || p != e) return Parsed::kNotNumber;
    if (ec == std::errc::result_out_of_range) {
        // Over- or underflow; a double tells which, and an underflow is a valid (tiny) value.
        double d = 0.0;
        const auto [p2, ec2] = std::from_chars(b, e, d, std::chars_format::general);
        if (ec2 == std::errc{} && p2 == e) {
            if (!(std::fabs(d) <= FLT_MAX)) return Parsed::kNotFinite;
            out = static_cast<float>(d);
            return Parsed::kOk;
        }
        if (!tinyMagnitude(s)) return Parsed::kNotFinite;
        out = s.front() == '-' ? -0.0f : 0.0f;
        return Parsed::kOk;
    }
    return std::isfinite(out) ? Parsed::kOk : Parsed::kNotFinite;
}

bool parseLabel(std::string_view s, int32_t& out) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || v > uint64_t{std::numeric_limits<int32_t>::max()})
        return false;
    out = static_cast<int32_t>(v);
    return true;
}

std::vector<std::string_view> splitFields(std::string_view line, char delimiter) {
    std::vector<std::string_view> fields;
    size_t pos = 0;
    for (;;) {
        const size_t end = line.find(delimiter, pos);
        fields.push_back(line.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
        if (end == std::string_view::npos) return fields;
        pos = end + 1;
    }
}

std::string quoted(std::string_view text) {
    text = stripBlanks(text);
    std::string s = "'";
    s.append(text.substr(0, kMaxQuotedBytes));
    if (text.size() > kMaxQuotedBytes) s += "...";
    return s + "'";
}

[[noreturn]] void failField(const std::string& path, const Record& record, const CsvLayout& layout, int64_t column,
                            std::string_view field, const char* what) {
    std::string msg = path + ":" + std::to_string(record.offset) + ": column " + std::to_string(column);
    if (layout.has_header) msg += " (" + quoted(layout.names[static_cast<size_t>(column)]) + ")";
    throw DataError(msg + ": " + quoted(field) + " " + what);
}

[[noreturn]] void failColumns(const std::string& path, const Record& record, const CsvLayout& layout) {
    const auto got = std::count(record.data.begin(), record.data.end(), layout.delimiter) + 1;
    throw DataError(path + ":" + std::to_string(record.offset) + ": expected " + std::to_string(layout.columns) +
                    " columns, got " + std::to_string(got));
}

// Before reporting a bad field: a wrong column count is the real error, which moved the fields.
void checkColumns(const std::string& path, const Record& record, const CsvLayout& layout) {
    if (std::count(record.data.begin(), record.data.end(), layout.delimiter) + 1 != layout.columns)
        failColumns(path, record, layout);
}

}  // namespace

// ---- CsvReader ----------------------------------------------------------------------------------

struct CsvReader::Impl {
    std::unique_ptr<StorageFile> file;
    CsvLayout layout;
    size_t chunk = 0;
    std::vector<char> buf;
    size_t begin = 0, end = 0;  // bytes of buf not yet handed out
    size_t scanned = 0;         // of those, already searched for '\n'
    bool eof = false;
    uint64_t lineNo = 0;        // lines consumed so far, blank ones included
    bool pending = false;       // the constructor read the first data line: hand it out first
    std::string pendingLine;
    uint64_t pendingNo = 0;

    // Moves the unconsumed tail to the front (growing the buffer for a line longer than a chunk)
    // and reads one chunk behind it: one storage request.
    void fill() {
        if (begin > 0) {
            std::memmove(buf.data(), buf.data() + begin, end - begin);
            end -= begin;
            begin = 0;
        }
        if (end > kMaxLineBytes)
            throw DataError(file->path() + ":" + std::to_string(lineNo + 1) +
                            ": line longer than 64 MiB (not a text file?)");
        if (buf.size() < end + chunk) buf.resize(end + chunk);
        const size_t got = file->read(buf.data() + end, chunk);
        end += got;
        eof = got < chunk;  // StorageFile::read is short only at the end of the file
    }

    // The next non-blank line without its line end (valid until the next call); false at the end.
    bool nextLine(std::string_view& line, uint64_t& number) {
        for (;;) {
            const char* base = buf.data();
            const size_t unscanned = end - begin - scanned;
            const void* nl = unscanned > 0 ? std::memchr(base + begin + scanned, '\n', unscanned) : nullptr;
            size_t lineEnd = end, next = end;
            if (nl != nullptr) {
                lineEnd = static_cast<size_t>(static_cast<const char*>(nl) - base);
                next = lineEnd + 1;
            } else if (!eof) {
                scanned = end - begin;
                fill();
                continue;
            } else if (begin == end) {
                return false;
            }
            line = std::string_view(base + begin, lineEnd - begin);
            begin = next;
            scanned = 0;
            ++lineNo;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (lineNo == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
            if (stripBlanks(line).empty()) continue;
            number = lineNo;
            return true;
        }
    }

    void resolveLabel(const std::string& column);
};

void CsvReader::Impl::resolveLabel(const std::string& column) {
    const std::string& path = file->path();
    const int64_t n = layout.columns;
    if (column.empty()) {
        layout.label_index = n - 1;
        return;
    }
    if (allDigits(column)) {
        uint64_t index = 0;
        const auto [p, ec] = std::from_chars(column.data(), column.data() + column.size(), index);
        if (ec != std::errc{} || index >= static_cast<uint64_t>(n))
            throw DataError(path + ": label column " + column + " is out of range: the file has " + std::to_string(n) +
                            " columns (0 to " + std::to_string(n - 1) + ")");
        layout.label_index = static_cast<int64_t>(index);
        return;
    }
    if (!layout.has_header)
        throw DataError(path + ": label column '" + column + "' is a name, but the file has no header row");
    const auto count = std::count(layout.names.begin(), layout.names.end(), column);
    if (count > 1)
        throw DataError(path + ": the header names " + std::to_string(count) + " columns '" + column +
                        "'; give the label column by its index");
    if (count == 0) {
        std::string known;
        for (size_t i = 0; i < layout.names.size() && i < kMaxNamesListed; ++i)
            known += (i ? ", '" : "'") + layout.names[i] + "'";
        if (layout.names.size() > kMaxNamesListed) known += ", ... of " + std::to_string(n) + " columns";
        throw DataError(path + ": no column named '" + column + "' in the header (" + known + ")");
    }
    layout.label_index = std::find(layout.names.begin(), layout.names.end(), column) - layout.names.begin();
}

CsvReader::CsvReader(std::unique_ptr<StorageFile> file, const CsvOptions& options) : impl_(std::make_unique<Impl>()) {
    if (!file) throw std::invalid_argument("CsvReader needs an open file");
    if (options.delimiter == '\n' || options.delimiter == '\r' || options.delimiter == '"')
        throw std::invalid_argument("csv delimiter cannot be a line end or a double quote");
    if (options.header != "auto" && options.header != "yes" && options.header != "no")
        throw std::invalid_argument("csv header must be \"auto\", \"yes\" or \"no\", got \"" + options.header + "\"");
    if (options.read_chunk_bytes <= 0) throw std::invalid_argument("csv read_chunk_bytes must be > 0");
    Impl& m = *impl_;
    m.file = std::move(file);
    m.chunk = static_cast<size_t>(options.read_chunk_bytes);
    m.layout.delimiter = options.delimiter;
    const std::string& path = m.file->path();

    std::string_view first;
    uint64_t firstNo = 0;
    if (!m.nextLine(first, firstNo)) throw DataError(path + ": empty CSV file (no lines)");
    const std::vector<std::string_view> fields = splitFields(first, options.delimiter);
    m.layout.columns = static_cast<int64_t>(fields.size());
    if (m.layout.columns < 2)
        throw DataError(path + ":" + std::to_string(firstNo) +
                        ": 1 column; a CSV source needs feature columns and a label column (delimiter '" +
                        std::string(1, options.delimiter) + "')");
    bool header = options.header == "yes";
    if (options.header == "auto") {
        float unused = 0.0f;
        header = std::any_of(fields.begin(), fields.end(),
                             [&](std::string_view f) { return parseFloat(fieldValue(f), unused) != Parsed::kOk; });
    }
    m.layout.has_header = header;
    if (header) {
        for (std::string_view f : fields) m.layout.names.emplace_back(fieldValue(f));
    } else {
        m.pending = true;
        m.pendingLine.assign(first);
        m.pendingNo = firstNo;
    }
    m.resolveLabel(options.label_column);
}

CsvReader::~CsvReader() = default;

const CsvLayout& CsvReader::layout() const { return impl_->layout; }

const std::string& CsvReader::path() const { return impl_->file->path(); }

bool CsvReader::next(Record& out) {
    Impl& m = *impl_;
    if (m.pending) {
        m.pending = false;
        out.data.assign(m.pendingLine);
        out.offset = m.pendingNo;
    } else {
        std::string_view line;
        uint64_t number = 0;
        if (!m.nextLine(line, number)) return false;
        out.data.assign(line);
        out.offset = number;
    }
    out.label = -1;
    out.format = RecordFormat::kCsvLine;
    return true;
}

// ---- decodeCsvLine ------------------------------------------------------------------------------

void decodeCsvLine(const Record& record, const CsvLayout& layout, Sample& out, const std::string& path) {
    const std::string_view line(record.data);
    const char delim = layout.delimiter;
    const int64_t columns = layout.columns;
    out.x.resize(static_cast<size_t>(layout.features()));
    float* x = out.x.data();
    const char* p = line.data();
    const char* const end = p + line.size();
    // One pass. Plain whole numbers of up to 7 digits (pixels, counts) are exact in a float and
    // take the short path; anything else is cut at the next delimiter and parsed in full.
    for (int64_t i = 0; i < columns; ++i) {
        uint32_t v = 0;
        int digits = 0;
        const char* q = p;
        for (; q != end && digits < 8; ++q, ++digits) {
            const unsigned d = static_cast<unsigned char>(*q) - unsigned{'0'};
            if (d > 9) break;
            v = v * 10 + d;
        }
        const char* fieldEnd = q;
        if (digits > 0 && digits <= 7 && (q == end || *q == delim) && i != layout.label_index) {
            *x++ = static_cast<float>(v);
        } else {
            const void* d = std::memchr(p, delim, static_cast<size_t>(end - p));
            fieldEnd = d != nullptr ? static_cast<const char*>(d) : end;
            const std::string_view field(p, static_cast<size_t>(fieldEnd - p));
            const std::string_view value = fieldValue(field);
            if (i == layout.label_index) {
                if (!parseLabel(value, out.label)) {
                    checkColumns(path, record, layout);
                    failField(path, record, layout, i, field, "is not a label (an integer from 0 to 2147483647)");
                }
            } else {
                const Parsed parsed = parseFloat(value, *x++);
                if (parsed != Parsed::kOk) {
                    checkColumns(path, record, layout);
                    failField(path, record, layout, i, field,
                              parsed == Parsed::kNotNumber ? "is not a number" : "is not a finite number");
                }
            }
        }
        if (i + 1 < columns) {
            if (fieldEnd == end) failColumns(path, record, layout);  // too few
            p = fieldEnd + 1;
        } else if (fieldEnd != end) {
            failColumns(path, record, layout);  // too many
        }
    }
}

}  // namespace trainbench::engine
