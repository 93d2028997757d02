#pragma once
// Run stores as earlier trainbench versions left them, for the migration and read-only tests: a
// file built by the real migrations 1..version (the SQL the library embeds, applied as that
// version's Schema did), and rows put into every table generically — tables and columns are read
// from the file, values chosen by declared type, foreign keys and CHECK (x IN (...)) lists
// followed — so that a table or column a new migration adds is covered without touching a test.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "profiler/store/migrations.h"
#include "profiler/store/schema.h"
#include "tests/profiler/storetestutil.h"

namespace trainbench::profiler::testutil {

// Creates path as the trainbench whose newest schema was `version` would have: WAL, then each
// migration up to it in its own transaction with its schema_migrations row and version bump.
inline void createStoreAtVersion(const std::string& path, int version) {
    RawDb db(path);
    db.exec("PRAGMA journal_mode = WAL");
    for (const Migration& m : migrations()) {
        if (m.version > version) break;
        db.exec("BEGIN IMMEDIATE");
        db.exec(std::string(m.sql));
        db.exec("INSERT INTO schema_migrations (version, description, applied_at) VALUES (" +
                std::to_string(m.version) + ", " + testutil::quoted(std::string(m.description)) +
                ", '2024-01-01T00:00:00.000Z')");
        db.exec("PRAGMA user_version = " + std::to_string(m.version));
        db.exec("PRAGMA application_id = " + std::to_string(Schema::kApplicationId));
        db.exec("COMMIT");
    }
}

// The store's tables, SQLite's own (sqlite_sequence) left out.
inline std::vector<std::string> tablesOf(RawDb& db) {
    std::vector<std::string> out;
    for (auto& row : db.textRows("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                             "ORDER BY name")) {
        out.push_back(row[0]);
    }
    return out;
}

inline std::vector<std::string> columnsOf(RawDb& db, const std::string& table) {
    std::vector<std::string> out;
    for (auto& row : db.textRows("SELECT name FROM pragma_table_info(" + testutil::quoted(table) + ") ORDER BY cid")) {
        out.push_back(row[0]);
    }
    return out;
}

// Every row of table, the given columns as quote() gives them (exact value and type), sorted.
inline std::vector<std::vector<std::string>> rowsOf(RawDb& db, const std::string& table,
                                                   const std::vector<std::string>& columns) {
    std::string select, order;
    for (size_t i = 0; i < columns.size(); ++i) {
        select += (i ? ", quote(\"" : "quote(\"") + columns[i] + "\")";
        order += (i ? ", " : "") + std::to_string(i + 1);
    }
    return db.textRows("SELECT " + select + " FROM \"" + table + "\" ORDER BY " + order);
}

// table -> its columns and rows: what a file holds, to compare before and after something.
struct TableContent {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    friend bool operator==(const TableContent&, const TableContent&) = default;
};
using StoreContent = std::map<std::string, TableContent>;

inline StoreContent contentOf(const std::string& path) {
    RawDb db(path);
    StoreContent content;
    for (const std::string& table : tablesOf(db)) {
        TableContent& t = content[table];
        t.columns = columnsOf(db, table);
        t.rows = rowsOf(db, table, t.columns);
    }
    return content;
}

inline std::string fileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

namespace detail {

// SQLite's type affinity rules (datatype3.html, 3.1).
inline char affinity(std::string type) {
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (type.find("INT") != std::string::npos) return 'i';
    if (type.find("CHAR") != std::string::npos || type.find("CLOB") != std::string::npos ||
        type.find("TEXT") != std::string::npos) return 't';
    if (type.empty() || type.find("BLOB") != std::string::npos) return 'b';
    return 'r';
}

// A literal of the column's type for row `row`: plain values, then edge values (an integer a
// double cannot hold, a tiny negative real, text with quotes, a newline and non-ASCII).
inline std::string literal(char affinity, const std::string& column, int row) {
    switch (affinity) {
        case 'i': return row == 1 ? "9007199254740993" : std::to_string(row + 1);
        case 'r': return row == 1 ? "-1.5e-300" : std::to_string(row) + ".25";
        case 't': return testutil::quoted(row == 1 ? column + " 'quoted' \"double\"\nline \xC3\xA9 \xE2\x9C\x93"
                                         : column + "-" + std::to_string(row));
        default: return "X'00FF0" + std::to_string(row % 10) + "'";
    }
}

// column -> allowed literals, from CHECK (column IN ('a', 'b')) clauses of the CREATE TABLE text.
inline std::map<std::string, std::vector<std::string>> checkedValues(const std::string& createSql) {
    std::map<std::string, std::vector<std::string>> out;
    static const std::regex check(R"(CHECK\s*\(\s*(\w+)\s+IN\s*\(([^)]*)\))", std::regex::icase);
    static const std::regex item(R"('[^']*')");
    for (auto it = std::sregex_iterator(createSql.begin(), createSql.end(), check); it != std::sregex_iterator(); ++it) {
        const std::string list = (*it)[2];
        for (auto v = std::sregex_iterator(list.begin(), list.end(), item); v != std::sregex_iterator(); ++v)
            out[(*it)[1]].push_back(v->str());
    }
    return out;
}

}  // namespace detail

// Puts `rows` rows into every table but schema_migrations (which the migrations filled): parents
// before children, each foreign key pointing at the parent's row of the same number, nullable
// columns NULL from the third row on. Throws (naming the table) if a row cannot be inserted.
inline void fillEveryTable(RawDb& db, int rows) {
    std::vector<std::string> pending = tablesOf(db);
    pending.erase(std::remove(pending.begin(), pending.end(), "schema_migrations"), pending.end());
    std::map<std::string, std::vector<std::map<std::string, std::string>>> inserted;  // table -> rows
    while (!pending.empty()) {
        const size_t before = pending.size();
        for (auto table = pending.begin(); table != pending.end();) {
            const auto keys = db.textRows("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(" +
                                      testutil::quoted(*table) + ")");
            const bool ready = std::all_of(keys.begin(), keys.end(),
                                           [&](const auto& k) { return k[1] == *table || inserted.count(k[1]); });
            if (!ready) {
                ++table;
                continue;
            }
            const auto checks = detail::checkedValues(
                db.text("SELECT sql FROM sqlite_schema WHERE name = " + testutil::quoted(*table)));
            const auto columns = db.textRows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(" +
                                         testutil::quoted(*table) + ") ORDER BY cid");
            for (int r = 0; r < rows; ++r) {
                std::map<std::string, std::string> values;
                std::string names, list;
                for (const auto& c : columns) {
                    const std::string& name = c[0];
                    std::string value = detail::literal(detail::affinity(c[1]), name, r);
                    if (r >= 2 && c[2] == "0" && c[3] == "0") value = "NULL";
                    if (auto allowed = checks.find(name); allowed != checks.end())
                        value = allowed->second[static_cast<size_t>(r) % allowed->second.size()];
                    for (const auto& k : keys)
                        if (k[0] == name) value = inserted[k[1]].at(static_cast<size_t>(r)).at(k[2]);
                    values[name] = value;
                    names += (names.empty() ? "\"" : ", \"") + name + "\"";
                    list += (list.empty() ? "" : ", ") + value;
                }
                db.exec("INSERT INTO \"" + *table + "\" (" + names + ") VALUES (" + list + ")");
                inserted[*table].push_back(std::move(values));
            }
            table = pending.erase(table);
        }
        if (pending.size() == before) throw std::runtime_error("foreign keys in a cycle among " + pending.front());
    }
}

}  // namespace trainbench::profiler::testutil
