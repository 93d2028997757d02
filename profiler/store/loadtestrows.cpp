// A load test's points in the store (schema 9): RunWriter writes them, RunStore reads them back.
#include "profiler/store/database.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/statement.h"

namespace trainbench::profiler {

void RunWriter::writeLoadTestPoints(const std::vector<LoadTestPoint>& points) {
    if (points.empty()) return;
    Statement& insertPoint = db_->cached(
        "INSERT OR REPLACE INTO loadtest_points (run_id, point, scenario, target_qps, concurrency, queries, "
        "achieved_qps, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, queue_ms, batch_ms, compute_ms, serialize_ms, "
        "network_ms, client_bound, errors) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
        "?15, ?16, ?17, ?18, ?19)");
    Statement& insertSecond = db_->cached(
        "INSERT OR REPLACE INTO loadtest_seconds (run_id, point, second, completed, errors, p50_ms, p99_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (const LoadTestPoint& p : points) {
        insertPoint.bindInt(1, runId_.value)
            .bindInt(2, p.point)
            .bindText(3, std::string_view(p.scenario))
            .bindDouble(4, p.target_qps)
            .bindInt(5, p.concurrency)
            .bindInt(6, p.queries)
            .bindDouble(7, p.achieved_qps)
            .bindDouble(8, p.p50_ms)
            .bindDouble(9, p.p90_ms)
            .bindDouble(10, p.p95_ms)
            .bindDouble(11, p.p99_ms)
            .bindDouble(12, p.p999_ms)
            .bindDouble(13, p.queue_ms)
            .bindDouble(14, p.batch_ms)
            .bindDouble(15, p.compute_ms)
            .bindDouble(16, p.serialize_ms)
            .bindDouble(17, p.network_ms)
            .bindInt(18, p.client_bound ? 1 : 0)
            .bindInt(19, p.errors);
        insertPoint.run();
        for (const LoadTestSecond& s : p.seconds) {
            insertSecond.bindInt(1, runId_.value)
                .bindInt(2, p.point)
                .bindInt(3, s.second)
                .bindInt(4, s.completed)
                .bindInt(5, s.errors)
                .bindDouble(6, s.p50_ms)
                .bindDouble(7, s.p99_ms);
            insertSecond.run();
        }
    }
}

std::vector<LoadTestPoint> RunStore::loadTestPoints(RunId id) {
    std::vector<LoadTestPoint> points;
    {
        Statement& query = db_->cached(
            "SELECT point, scenario, target_qps, concurrency, queries, achieved_qps, p50_ms, p90_ms, p95_ms, p99_ms, "
            "p999_ms, queue_ms, batch_ms, compute_ms, serialize_ms, network_ms, client_bound, errors "
            "FROM loadtest_points WHERE run_id = ?1 ORDER BY point");
        Statement::ResetGuard guard(query);
        query.bindInt(1, id.value);
        while (query.step()) {
            LoadTestPoint& p = points.emplace_back();
            p.point = query.columnInt(0);
            p.scenario = query.columnText(1);
            p.target_qps = query.optionalDouble(2);
            p.concurrency = query.optionalInt(3);
            p.queries = query.columnInt(4);
            p.achieved_qps = query.columnDouble(5);
            p.p50_ms = query.optionalDouble(6);
            p.p90_ms = query.optionalDouble(7);
            p.p95_ms = query.optionalDouble(8);
            p.p99_ms = query.optionalDouble(9);
            p.p999_ms = query.optionalDouble(10);
            p.queue_ms = query.optionalDouble(11);
            p.batch_ms = query.optionalDouble(12);
            p.compute_ms = query.optionalDouble(13);
            p.serialize_ms = query.optionalDouble(14);
            p.network_ms = query.optionalDouble(15);
            p.client_bound = query.columnInt(16) != 0;
            p.errors = query.columnInt(17);
        }
    }
    Statement& seconds = db_->cached(
        "SELECT point, second, completed, errors, p50_ms, p99_ms FROM loadtest_seconds WHERE run_id = ?1 "
        "ORDER BY point, second");
    Statement::ResetGuard guard(seconds);
    seconds.bindInt(1, id.value);
    size_t at = 0;  // both queries are in point order
    while (seconds.step()) {
        const int64_t point = seconds.columnInt(0);
        while (at < points.size() && points[at].point < point) ++at;
        if (at == points.size()) break;
        if (points[at].point != point) continue;  // seconds of a point without its row: nothing to attach them to
        points[at].seconds.push_back({seconds.columnInt(1), seconds.columnInt(2), seconds.columnInt(3),
                                      seconds.optionalDouble(4), seconds.optionalDouble(5)});
    }
    return points;
}

}  // namespace trainbench::profiler
