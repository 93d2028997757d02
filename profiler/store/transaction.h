#pragma once
// A write transaction started with BEGIN IMMEDIATE: it takes the write lock up front (waiting up
// to the busy timeout), so it never fails half-way with SQLITE_BUSY on a lock upgrade. Rolled back
// unless commit() was reached, so a failed batch leaves nothing behind.
namespace trainbench::profiler {

class Database;

class Transaction {
public:
    explicit Transaction(Database& db);
    ~Transaction();

    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit();

private:
    Database& db_;
    bool done_ = false;
};

}  // namespace trainbench::profiler
