#pragma once
// A plain-text table with columns sized to their contents, for terminal listings.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace trainbench::cli {

// One number through a printf format ("%.1f"), for table cells.
inline std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

    void print(std::FILE* out) const {
        std::vector<size_t> width(rows_[0].size(), 0);
        for (const auto& r : rows_)
            for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
        for (const auto& r : rows_) {
            std::string line;
            for (size_t c = 0; c < r.size() && c < width.size(); ++c) {
                line += r[c];
                if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            std::fprintf(out, "%s\n", line.c_str());
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace trainbench::cli
