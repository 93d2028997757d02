#pragma once
// Shared by the run-store tests: a temp folder per test, sample records, and raw SQLite access to
// inspect or doctor a store file the way a user with the sqlite3 shell could.
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/telemetry/runrecords.h"
#include "profiler/store/processidentity.h"

namespace trainbench::profiler::testutil {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        std::random_device random;
        path_ = fs::temp_directory_path() /
                ("trainbench-store-" + std::to_string(getpid()) + "-" +
                 std::to_string(counter++) + "-" + std::to_string(random()));
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    fs::path path_;
};

inline engine::StepRecord makeStep(int64_t step) {
    engine::StepRecord r;
    r.step = step;
    r.epoch = (step - 1) / 100;
    r.loss = 2.5 / static_cast<double>(step);
    r.step_seconds = 0.01 + static_cast<double>(step % 7) * 1e-4;
    r.input_seconds = 0.002;
    r.samples = 64;
    r.samples_per_second = 64.0 / r.step_seconds;
    r.learning_rate = 0.1 / (1.0 + static_cast<double>(step) * 1e-3);
    r.wall_seconds = static_cast<double>(step) * 0.0105;
    r.comm_seconds = 0.001 * static_cast<double>(step);
    r.wait_seconds = 0.0005;
    for (int rank = 0; rank < 2; ++rank) {
        engine::ReplicaStep& replica = r.replicas.emplace_back();
        replica.rank = rank;
        replica.samples = 32;
        replica.compute_seconds = 0.008 + rank * 1e-4;
        replica.comm_seconds = 0.001 * static_cast<double>(step);
        replica.wait_seconds = 0.0005 * rank;
    }
    return r;
}

inline engine::EvalRecord makeEval(int64_t step, const std::string& split = "test") {
    engine::EvalRecord r;
    r.step = step;
    r.epoch = (step - 1) / 100;
    r.split = split;
    r.loss = 1.0 / static_cast<double>(step + 1);
    r.accuracy = 1.0 - 1.0 / static_cast<double>(step + 2);
    r.samples = 10000;
    r.eval_seconds = 0.25;
    r.wall_seconds = static_cast<double>(step) * 0.0105;
    return r;
}

// A plain connection, no trainbench code in between.
class RawDb {
public:
    explicit RawDb(const std::string& path) {
        if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
            throw std::runtime_error("cannot open " + path);
        }
        sqlite3_busy_timeout(db_, 5000);
    }
    ~RawDb() { sqlite3_close(db_); }
    RawDb(const RawDb&) = delete;
    RawDb& operator=(const RawDb&) = delete;

    void exec(const std::string& sql) {
        char* error = nullptr;
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
            std::string message = error != nullptr ? error : "?";
            sqlite3_free(error);
            throw std::runtime_error(sql + ": " + message);
        }
    }
    // First column of the first row, as text ("" for NULL or no row).
    std::string text(const std::string& sql) {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
            throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
        }
        std::string result;
        if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
            result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        }
        sqlite3_finalize(stmt);
        return result;
    }
    // Every row, every column as text (NULL as std::nullopt).
    std::vector<std::vector<std::optional<std::string>>> rows(const std::string& sql) {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
            throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
        }
        std::vector<std::vector<std::optional<std::string>>> result;
        int rc = SQLITE_ROW;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            auto& row = result.emplace_back();
            for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
                const auto* value = sqlite3_column_text(stmt, c);
                row.push_back(value ? std::optional<std::string>(reinterpret_cast<const char*>(value))
                                    : std::nullopt);
            }
        }
        sqlite3_finalize(stmt);
        if (rc != SQLITE_DONE) throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
        return result;
    }
    // As rows(), NULL as "": select quote(x) to tell types and NULL apart.
    std::vector<std::vector<std::string>> textRows(const std::string& sql) {
        std::vector<std::vector<std::string>> out;
        for (auto& row : rows(sql)) {
            auto& textRow = out.emplace_back();
            for (auto& value : row) textRow.push_back(value.value_or(""));
        }
        return out;
    }
    int64_t integer(const std::string& sql) {
        const std::string value = text(sql);
        return value.empty() ? 0 : std::stoll(value);
    }
    int64_t lastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

private:
    sqlite3* db_ = nullptr;
};

inline std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

// Inserts a 'running' run as if some process had started it (store must exist). Returns its id.
inline int64_t insertRunningRow(const std::string& path, const ProcessIdentity& writer,
                                int64_t committedSteps = 0) {
    RawDb db(path);
    db.exec("INSERT INTO runs (name, status, config_json, host, pid, proc_start, boot_id, "
            "started_at) VALUES ('doctored', 'running', '{}', " +
            quoted(writer.host) + ", " + std::to_string(writer.pid) + ", " +
            (writer.proc_start ? std::to_string(*writer.proc_start) : "NULL") + ", " +
            (writer.boot_id ? quoted(*writer.boot_id) : "NULL") + ", '2024-01-01T00:00:00.000Z')");
    const int64_t id = db.lastInsertRowId();
    for (int64_t s = 1; s <= committedSteps; ++s) {
        db.exec("INSERT INTO steps (run_id, step, epoch, loss) VALUES (" + std::to_string(id) +
                ", " + std::to_string(s) + ", 0, 1.0)");
    }
    return id;
}

}  // namespace trainbench::profiler::testutil
