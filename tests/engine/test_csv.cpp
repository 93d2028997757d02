// CSV sources: line splitting through Storage (CRLF, blank lines, chunk boundaries), header and
// label-column detection, number parsing, and every error message a user can see.
#include "engine/data/sources/csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "tempdirtest.h"

namespace trainbench::engine {
namespace {

using test::errorOf;
using test::writeText;

class CsvTest : public test::TempDirTest {
protected:
    // Writes `text` as data.csv and opens a reader on it.
    std::unique_ptr<CsvReader> reader(const std::string& text, const CsvOptions& options = {}) {
        writeText(path("data.csv"), text);
        return std::make_unique<CsvReader>(storage_.open(path("data.csv")), options);
    }
    struct Row {
        uint64_t line;
        std::vector<float> x;
        int32_t label;
    };
    // Every record of `r`, decoded.
    static std::vector<Row> readAll(CsvReader& r) {
        std::vector<Row> rows;
        Record rec;
        Sample s;
        while (r.next(rec)) {
            decodeCsvLine(rec, r.layout(), s, r.path());
            rows.push_back({rec.offset, s.x, s.label});
        }
        return rows;
    }
    // The message of decoding the first record of `text`.
    std::string decodeError(const std::string& text, const CsvOptions& options = {}) {
        auto r = reader(text, options);
        return errorOf([&] {
            Record rec;
            Sample s;
            while (r->next(rec)) decodeCsvLine(rec, r->layout(), s, r->path());
        });
    }
    Storage storage_;
};

using CsvReaderTest = CsvTest;
using CsvDecodeTest = CsvTest;

TEST_F(CsvReaderTest, HeaderRowNamesColumnsAndLabelIsLastByDefault) {
    auto r = reader("a,b,label\n1,2.5,3\n-4,5e-1,0\n");
    const CsvLayout& l = r->layout();
    EXPECT_TRUE(l.has_header);
    EXPECT_EQ(l.columns, 3);
    EXPECT_EQ(l.features(), 2);
    EXPECT_EQ(l.label_index, 2);
    EXPECT_EQ(l.names, (std::vector<std::string>{"a", "b", "label"}));
    const auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].line, 2u);
    EXPECT_EQ(rows[0].x, (std::vector<float>{1.0f, 2.5f}));
    EXPECT_EQ(rows[0].label, 3);
    EXPECT_EQ(rows[1].line, 3u);
    EXPECT_EQ(rows[1].x, (std::vector<float>{-4.0f, 0.5f}));
    EXPECT_EQ(rows[1].label, 0);
}

TEST_F(CsvReaderTest, WithoutHeaderTheFirstLineIsData) {
    auto r = reader("1,2,3\n4,5,6");  // and no newline at the end
    EXPECT_FALSE(r->layout().has_header);
    EXPECT_TRUE(r->layout().names.empty());
    const auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].line, 1u);
    EXPECT_EQ(rows[0].x, (std::vector<float>{1, 2}));
    EXPECT_EQ(rows[1].line, 2u);
    EXPECT_EQ(rows[1].x, (std::vector<float>{4, 5}));
    EXPECT_EQ(rows[1].label, 6);
}

TEST_F(CsvReaderTest, CrlfAndBlankLinesKeepLineNumbers) {
    auto r = reader("\r\nx,y\r\n\r\n1,2\r\n  \t \r\n3,4\r\n\r\n");
    Record rec;
    rec.file = 7;
    ASSERT_TRUE(r->next(rec));
    EXPECT_EQ(rec.data, "1,2");
    EXPECT_EQ(rec.offset, 4u);
    EXPECT_EQ(rec.format, RecordFormat::kCsvLine);
    EXPECT_EQ(rec.label, -1);
    EXPECT_EQ(rec.file, 7u) << "the pipeline sets the file index";
    ASSERT_TRUE(r->next(rec));
    EXPECT_EQ(rec.data, "3,4");
    EXPECT_EQ(rec.offset, 6u);
    EXPECT_FALSE(r->next(rec));
    EXPECT_FALSE(r->next(rec));
}

TEST_F(CsvReaderTest, HeaderOptionForcesEitherWay) {
    CsvOptions yes;
    yes.header = "yes";
    auto r = reader("1,2,3\n4,5,6\n", yes);
    EXPECT_EQ(r->layout().names, (std::vector<std::string>{"1", "2", "3"}));
    EXPECT_EQ(readAll(*r).size(), 1u);
    CsvOptions no;
    no.header = "no";
    EXPECT_EQ(decodeError("p,q,label\n1,2,3\n", no),
              path("data.csv") + ":1: column 0: 'p' is not a number");
}

TEST_F(CsvReaderTest, HeaderOnlyFileHasNoRecords) {
    auto r = reader("a,b\n\n");
    EXPECT_TRUE(r->layout().has_header);
    Record rec;
    EXPECT_FALSE(r->next(rec));
}

TEST_F(CsvReaderTest, LabelColumnByNameByIndexOrLast) {
    const std::string text = "label,p0,p1\n7,0.5,1.5\n";
    CsvOptions byName;
    byName.label_column = "label";
    auto r = reader(text, byName);
    EXPECT_EQ(r->layout().label_index, 0);
    auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].x, (std::vector<float>{0.5f, 1.5f}));
    EXPECT_EQ(rows[0].label, 7);

    CsvOptions byIndex;
    byIndex.label_column = "0";
    r = reader("7,0.5,1.5\n", byIndex);
    rows = readAll(*r);
    EXPECT_EQ(rows[0].x, (std::vector<float>{0.5f, 1.5f}));
    EXPECT_EQ(rows[0].label, 7);

    byIndex.label_column = "1";
    r = reader("7,5,1.5\n", byIndex);
    rows = readAll(*r);
    EXPECT_EQ(rows[0].x, (std::vector<float>{7.0f, 1.5f}));
    EXPECT_EQ(rows[0].label, 5);
}

TEST_F(CsvReaderTest, LabelColumnErrors) {
    CsvOptions o;
    o.label_column = "lbl";
    EXPECT_EQ(errorOf([&] { reader("a,b,label\n1,2,3\n", o); }),
              path("data.csv") + ": no column named 'lbl' in the header ('a', 'b', 'label')");
    EXPECT_EQ(errorOf([&] { reader("1,2,3\n", o); }),
              path("data.csv") + ": label column 'lbl' is a name, but the file has no header row");
    o.label_column = "3";
    EXPECT_EQ(errorOf([&] { reader("a,b,label\n1,2,3\n", o); }),
              path("data.csv") + ": label column 3 is out of range: the file has 3 columns (0 to 2)");
    o.label_column = "x";
    EXPECT_EQ(errorOf([&] { reader("x,y,x\n1,2,3\n", o); }),
              path("data.csv") + ": the header names 2 columns 'x'; give the label column by its index");
    // Long headers are listed in part.
    std::string header;
    for (int i = 0; i < 20; ++i) header += (i ? ",c" : "c") + std::to_string(i);
    o.label_column = "nope";
    EXPECT_EQ(errorOf([&] { reader(header + "\n", o); }),
              path("data.csv") + ": no column named 'nope' in the header ('c0', 'c1', 'c2', 'c3', 'c4', 'c5', "
                                 "'c6', 'c7', ... of 20 columns)");
}

TEST_F(CsvReaderTest, EmptyOrSingleColumnFile) {
    EXPECT_EQ(errorOf([&] { reader(""); }), path("data.csv") + ": empty CSV file (no lines)");
    EXPECT_EQ(errorOf([&] { reader("\n \r\n\t\n"); }), path("data.csv") + ": empty CSV file (no lines)");
    EXPECT_EQ(errorOf([&] { reader("\n1\n2\n"); }),
              path("data.csv") + ":2: 1 column; a CSV source needs feature columns and a label column (delimiter ',')");
}

TEST_F(CsvReaderTest, BadOptions) {
    writeText(path("data.csv"), "1,2\n");
    CsvOptions o;
    o.header = "maybe";
    EXPECT_THROW(CsvReader(storage_.open(path("data.csv")), o), std::invalid_argument);
    o = {};
    o.delimiter = '"';
    EXPECT_THROW(CsvReader(storage_.open(path("data.csv")), o), std::invalid_argument);
    o = {};
    o.read_chunk_bytes = 0;
    EXPECT_THROW(CsvReader(storage_.open(path("data.csv")), o), std::invalid_argument);
    EXPECT_THROW(CsvReader(nullptr, CsvOptions{}), std::invalid_argument);
}

TEST_F(CsvReaderTest, OtherDelimitersQuotesBlanksAndByteOrderMark) {
    CsvOptions semi;
    semi.delimiter = ';';
    auto r = reader("\xEF\xBB\xBF\"a\" ; \"b\";lab\n 1.5 ;\" 2 \"; \"3\"\n", semi);
    EXPECT_EQ(r->layout().names, (std::vector<std::string>{"a", "b", "lab"}));
    auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].x, (std::vector<float>{1.5f, 2.0f}));
    EXPECT_EQ(rows[0].label, 3);

    CsvOptions tab;
    tab.delimiter = '\t';
    r = reader("+4\t-0.25e1\t+2\n", tab);
    rows = readAll(*r);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].x, (std::vector<float>{4.0f, -2.5f}));
    EXPECT_EQ(rows[0].label, 2);
}

// Lines of every length cross chunk boundaries at every position: small chunks, many boundaries.
TEST_F(CsvReaderTest, LinesSpanningReadChunks) {
    std::string text = "f0,f1,label\n";
    std::vector<Row> want;
    uint64_t line = 1;
    for (int i = 0; i < 2000; ++i) {
        const int pad = i % 37;  // vary line lengths
        text += std::string(static_cast<size_t>(pad % 5), ' ') + std::to_string(i) + "." + std::string(pad, '5') +
                "," + std::to_string(-i) + "," + std::to_string(i % 10) + (i % 3 == 0 ? "\r\n" : "\n");
        want.push_back({++line, {std::stof(std::to_string(i) + "." + std::string(pad, '5')), float(-i)}, i % 10});
        if (i % 100 == 99) {
            text += "\n";
            ++line;
        }
    }
    text += "1,2,3";  // last line without a newline
    want.push_back({line + 1, {1, 2}, 3});
    for (int64_t chunk : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{1000}, kCsvReadChunkBytes}) {
        CsvOptions o;
        o.read_chunk_bytes = chunk;
        auto r = reader(text, o);
        const auto rows = readAll(*r);
        ASSERT_EQ(rows.size(), want.size()) << "chunk " << chunk;
        for (size_t i = 0; i < rows.size(); ++i) {
            ASSERT_EQ(rows[i].line, want[i].line) << "chunk " << chunk << " row " << i;
            ASSERT_EQ(rows[i].x, want[i].x) << "chunk " << chunk << " row " << i;
            ASSERT_EQ(rows[i].label, want[i].label) << "chunk " << chunk << " row " << i;
        }
    }
}

// A file of several default chunks (Fashion-MNIST-like rows): every line read, and every storage
// request is a whole chunk but the last.
TEST_F(CsvReaderTest, FileLargerThanTheReadChunk) {
    std::string text = "label";
    for (int i = 0; i < 784; ++i) text += ",pixel" + std::to_string(i);
    text += "\n";
    const int lines = 1200;
    for (int n = 0; n < lines; ++n) {
        text += std::to_string(n % 10);
        for (int i = 0; i < 784; ++i) text += "," + std::to_string((n * 31 + i * 7) % 256);
        text += "\n";
    }
    ASSERT_GT(text.size(), 2 * static_cast<size_t>(kCsvReadChunkBytes));
    CsvOptions o;
    o.label_column = "label";
    auto r = reader(text, o);
    EXPECT_EQ(r->layout().features(), 784);
    Record rec;
    Sample s;
    int n = 0;
    while (r->next(rec)) {
        decodeCsvLine(rec, r->layout(), s, r->path());
        ASSERT_EQ(s.label, n % 10);
        ASSERT_EQ(s.x.size(), 784u);
        ASSERT_EQ(s.x[0], float((n * 31) % 256)) << n;
        ASSERT_EQ(s.x[783], float((n * 31 + 783 * 7) % 256)) << n;
        ++n;
    }
    EXPECT_EQ(n, lines);
    const StorageStats st = storage_.stats();
    EXPECT_EQ(st.bytes, static_cast<int64_t>(text.size()));
    EXPECT_EQ(st.requests, static_cast<int64_t>(text.size() / kCsvReadChunkBytes + 1));
    EXPECT_GE(kCsvReadChunkBytes, 256 * 1024);
}

TEST_F(CsvDecodeTest, WrongColumnCountNamesFileAndLine) {
    EXPECT_EQ(decodeError("a,b,c\n1,2,3\n\n1,2\n"), path("data.csv") + ":4: expected 3 columns, got 2");
    EXPECT_EQ(decodeError("1,2,3\n1,2,3,4,5\n"), path("data.csv") + ":2: expected 3 columns, got 5");
}

TEST_F(CsvDecodeTest, BadNumberNamesTheColumn) {
    EXPECT_EQ(decodeError("a,b,label\n1,x1,3\n"), path("data.csv") + ":2: column 1 ('b'): 'x1' is not a number");
    EXPECT_EQ(decodeError("1,2,3\n1, 1.5.5 ,3\n"), path("data.csv") + ":2: column 1: '1.5.5' is not a number");
    EXPECT_EQ(decodeError("1,2,3\n,2,3\n"), path("data.csv") + ":2: column 0: '' is not a number");
    EXPECT_EQ(decodeError("1,2,3\n1e,2,3\n"), path("data.csv") + ":2: column 0: '1e' is not a number");
    EXPECT_EQ(decodeError("1,2,3\n0x10,2,3\n"), path("data.csv") + ":2: column 0: '0x10' is not a number");
    EXPECT_EQ(decodeError("1,2,3\n+-1,2,3\n"), path("data.csv") + ":2: column 0: '+-1' is not a number");
    const std::string longField(100, 'z');
    EXPECT_EQ(decodeError("1,2,3\n1," + longField + ",3\n"),
              path("data.csv") + ":2: column 1: '" + std::string(64, 'z') + "...' is not a number");
}

TEST_F(CsvDecodeTest, NonFiniteValuesAreRejected) {
    for (const char* v : {"nan", "NaN", "inf", "-Infinity", "1e39", "-3.5e38", "1e400"})
        EXPECT_EQ(decodeError(std::string("a,label\n") + v + ",1\n"),
                  path("data.csv") + ":2: column 0 ('a'): '" + v + "' is not a finite number");
}

TEST_F(CsvDecodeTest, TinyValuesReadAsZeroOrSubnormal) {
    auto r = reader("1,2,3,4,0\n1e-50,-1e-400,1e-40,0.000000000000000000000000000000000000000000000000001,1\n");
    const auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].x[0], 0.0f);
    EXPECT_EQ(rows[1].x[1], 0.0f);
    EXPECT_TRUE(std::signbit(rows[1].x[1]));
    // A subnormal float survives the parse, unless the calling thread flushes subnormals to zero
    // (training threads set FTZ/DAZ, bindComputeThreads, and an earlier test in this process may
    // have set it on this one): then it reads as 0, which is what training would make of it anyway.
    if (rows[1].x[2] != 0.0f) {
        EXPECT_NEAR(rows[1].x[2], 1e-40f, 1e-44f);
    }
    EXPECT_EQ(rows[1].x[3], 0.0f);
}

TEST_F(CsvDecodeTest, LabelMustBeANonNegativeInt32) {
    auto r = reader("a,label\n1,2147483647\n1,+0\n");
    const auto rows = readAll(*r);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].label, 2147483647);
    EXPECT_EQ(rows[1].label, 0);
    for (const char* v : {"2.5", "-1", "2147483648", "1e3", "x", ""})
        EXPECT_EQ(decodeError(std::string("a,label\n1,") + v + "\n"),
                  path("data.csv") + ":2: column 1 ('label'): '" + v +
                      "' is not a label (an integer from 0 to 2147483647)");
}

TEST_F(CsvDecodeTest, SampleCapacityIsReused) {
    auto r = reader("10.5,20.25,30.125,0\n40.5,50.25,60.125,1\n");  // longer than std::string's inline buffer
    Record rec;
    Sample s;
    ASSERT_TRUE(r->next(rec));
    decodeCsvLine(rec, r->layout(), s, r->path());
    const float* before = s.x.data();
    const char* line = rec.data.data();
    ASSERT_TRUE(r->next(rec));
    decodeCsvLine(rec, r->layout(), s, r->path());
    EXPECT_EQ(s.x.data(), before);
    EXPECT_EQ(rec.data.data(), line);
    EXPECT_EQ(s.x, (std::vector<float>{40.5f, 50.25f, 60.125f}));
}

}  // namespace
}  // namespace trainbench::engine
