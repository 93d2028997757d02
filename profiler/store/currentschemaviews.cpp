#include "profiler/store/currentschemaviews.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/database.h"
#include "profiler/store/migrations.h"

namespace trainbench::profiler {

namespace {

struct Column {
    std::string name;
    std::optional<std::string> defaultSql;  // as declared, e.g. 'wall'; nullopt: NULL
};

struct Table {
    std::string name;
    bool withoutRowid = false;
    std::vector<Column> columns;  // in declaration order
};

std::string quoted(const std::string& identifier) {
    std::string out = "\"";
    for (char c : identifier) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

// The tables of the current schema, read from an in-memory database built with every migration:
// the migrations are the only definition of the schema, so nothing here repeats them.
std::vector<Table> currentTables() {
    Database memory(":memory:", Database::Access::ReadWrite);
    for (const Migration& migration : migrations()) memory.exec(migration.sql);
    std::vector<Table> tables;
    Statement list(memory,
                   "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' "
                   "AND name NOT LIKE 'sqlite_%' ORDER BY name");
    while (list.step()) tables.push_back({list.columnText(0), list.columnInt(1) != 0, {}});
    for (Table& table : tables) {
        Statement columns(memory, "SELECT name, dflt_value FROM pragma_table_info(?1) ORDER BY cid");
        columns.bindText(1, std::string_view(table.name));
        while (columns.step()) table.columns.push_back({columns.columnText(0), columns.optionalText(1)});
    }
    return tables;
}

const std::vector<Table>& current() {
    static const std::vector<Table> tables = currentTables();
    return tables;
}

// The view standing in for `table`, or "" when the file has it whole.
std::string viewSql(Database& db, const Table& table) {
    std::vector<std::string> present;
    {
        Statement columns(db, "SELECT name FROM pragma_table_info(?1, 'main')");
        columns.bindText(1, std::string_view(table.name));
        while (columns.step()) present.push_back(columns.columnText(0));
    }
    const auto has = [&](const std::string& name) {
        return std::find(present.begin(), present.end(), name) != present.end();
    };
    if (!present.empty() && std::all_of(table.columns.begin(), table.columns.end(),
                                        [&](const Column& c) { return has(c.name); })) {
        return {};
    }
    std::string values;
    for (const Column& column : table.columns) {
        if (!values.empty()) values += ", ";
        values += has(column.name) ? quoted(column.name) : column.defaultSql.value_or("NULL");
        values += " AS " + quoted(column.name);
    }
    const std::string view = "CREATE TEMP VIEW " + quoted(table.name) + " AS SELECT ";
    if (present.empty()) return view + values + " WHERE 0";
    // Queries may order a rowid table by its rowid (evals); a view has none unless it names one.
    const std::string rowid = table.withoutRowid ? "" : "rowid AS rowid, ";
    return view + rowid + values + " FROM main." + quoted(table.name);
}

}  // namespace

int CurrentSchemaViews::install(Database& db) {
    // The views live in memory: a temp file would be a file write, and nothing here needs one.
    db.exec("PRAGMA temp_store = MEMORY");
    int created = 0;
    for (const Table& table : current()) {
        const std::string sql = viewSql(db, table);
        if (sql.empty()) continue;
        db.exec(sql);
        ++created;
    }
    return created;
}

}  // namespace trainbench::profiler
