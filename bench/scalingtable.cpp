#include "bench/scalingtable.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "bench/benchutil.h"

namespace trainbench::bench {

namespace {

using profiler::RunRow;

std::optional<double> medianOf(const std::vector<RunOutcome>& runs,
                               const std::function<std::optional<double>(const RunOutcome&)>& get) {
    std::vector<double> values;
    for (const auto& r : runs)
        if (auto v = get(r); v && std::isfinite(*v)) values.push_back(*v);
    if (values.empty()) return std::nullopt;
    return median(values);
}

std::optional<double> shareOf(const RunRow& row, const std::optional<double>& part) {
    if (!row.train_seconds || *row.train_seconds <= 0) return std::nullopt;
    return part.value_or(0.0) / *row.train_seconds;
}

std::string format(const char* fmt, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, fmt, v);
    return buffer;
}

std::string thousands(double v) {
    std::string digits = std::to_string(std::llround(v)), grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    return grouped;
}

std::string percent(const std::optional<double>& share) {
    return share ? format("%.0f %%", *share * 100.0) : "-";
}

std::string orDash(const std::optional<double>& v, const char* fmt) { return v ? format(fmt, *v) : "-"; }

// Columns sized to their contents.
void printColumns(std::FILE* out, const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
        for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c) line += r[c] + std::string(width[c] - r[c].size() + 2, ' ');
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::fprintf(out, "  %s\n", line.c_str());
    }
}

// Why a run gave no figures: the store's status and message, or the CLI's last words.
std::string problemOf(const RunOutcome& r) {
    if (r.run) return std::string(profiler::runStatusName(r.run->status)) + ": " + r.run->message.value_or("");
    return r.problem;
}

}  // namespace

PointFigures summarize(const PointResults& results) {
    PointFigures f;
    std::vector<RunOutcome> done;
    for (const auto& r : results.runs) {
        ++f.runs;
        if (!r.completed()) continue;
        done.push_back(r);
        if (r.run->time_to_target) ++f.reached;
        if (r.run->best_accuracy) f.bestAccuracy = std::max(f.bestAccuracy.value_or(0.0), *r.run->best_accuracy);
        if (r.run->target_accuracy) f.targetAccuracy = r.run->target_accuracy;
        f.othersCpusMax = std::max(f.othersCpusMax, r.othersCpus);
    }
    f.completed = static_cast<int>(done.size());
    const double examples = static_cast<double>(results.point.workload->trainExamples);
    f.throughput = medianOf(done, [](const RunOutcome& r) { return r.run->throughput; });
    for (const auto& r : done) {
        if (!r.run->throughput) continue;
        f.throughputMin = std::min(f.throughputMin.value_or(*r.run->throughput), *r.run->throughput);
        f.throughputMax = std::max(f.throughputMax.value_or(*r.run->throughput), *r.run->throughput);
    }
    f.timeToTarget = medianOf(done, [](const RunOutcome& r) { return r.run->time_to_target; });
    f.stepAtTarget = medianOf(done, [](const RunOutcome& r) -> std::optional<double> {
        if (!r.run->step_at_target) return std::nullopt;
        return static_cast<double>(*r.run->step_at_target);
    });
    f.epochsAtTarget = medianOf(done, [examples](const RunOutcome& r) -> std::optional<double> {
        if (!r.samplesAtTarget) return std::nullopt;
        return static_cast<double>(*r.samplesAtTarget) / examples;
    });
    f.computeShare = medianOf(done, [](const RunOutcome& r) { return shareOf(*r.run, r.computeSeconds); });
    f.computePerSample = medianOf(done, [&](const RunOutcome& r) -> std::optional<double> {
        if (!r.computeSeconds || r.samples <= 0) return std::nullopt;
        return *r.computeSeconds * results.point.workers / static_cast<double>(r.samples);
    });
    // An asynchronous step runs on one worker and its comm_seconds are that worker's, so the run's
    // total is the workers' sum: divided by the workers, it is each one's mean, as for sync.
    const double commWorkers = results.point.mode == Mode::Async ? results.point.workers : 1.0;
    f.commShare = medianOf(done, [commWorkers](const RunOutcome& r) -> std::optional<double> {
        const auto share = shareOf(*r.run, r.run->comm_seconds);
        if (!share) return std::nullopt;
        return *share / commWorkers;
    });
    f.waitShare = medianOf(done, [](const RunOutcome& r) { return shareOf(*r.run, r.run->wait_seconds); });
    f.inputShare = medianOf(done, [](const RunOutcome& r) { return shareOf(*r.run, r.run->input_seconds); });
    f.stalenessMean = medianOf(done, [](const RunOutcome& r) { return r.stalenessMean; });
    f.stalenessP95 = medianOf(done, [](const RunOutcome& r) { return r.stalenessP95; });
    return f;
}

std::string boundBy(const SweepPoint& p, const PointFigures& f, const PointFigures* base, unsigned cores) {
    if (!f.throughput) return "-";
    const double exchange = f.commShare.value_or(0.0) + f.waitShare.value_or(0.0);
    const double input = f.inputShare.value_or(0.0);
    const double compute = f.computeShare.value_or(1.0 - exchange - input);
    std::string verdict;
    if (input >= 0.2)
        verdict = "input (" + percent(input) + " waiting for data)";
    else if (p.mode == Mode::Single || compute >= 0.5)
        verdict = "compute (" + percent(compute) + " of the time)";
    else
        verdict = "communication (compute " + percent(compute) + ", exchange " + percent(exchange) + ", other " +
                  percent(std::max(0.0, 1.0 - compute - exchange)) + ")";
    if (base && base != &f && base->computePerSample && f.computePerSample && *base->computePerSample > 0) {
        const double growth = *f.computePerSample / *base->computePerSample;
        if (growth >= 1.2) verdict += "; compute per sample " + format("%.1fx", growth) + " of 1 worker";
    }
    if (p.busyThreads() > static_cast<int>(cores)) {
        verdict += "; oversubscribed: " + std::to_string(p.workers) + " worker(s) x " + std::to_string(p.threads) +
                   " thread(s)";
        if (p.mode == Mode::Async) verdict += " + " + std::to_string(p.servers) + " PS";
        verdict += " on " + std::to_string(cores) + " cores";
    }
    return verdict;
}

namespace {

std::string targetCell(const PointFigures& f, bool quick) {
    if (quick || f.completed == 0) return "-";
    if (f.reached == 0)
        return "not reached (best " + (f.bestAccuracy ? format("%.2f %%", *f.bestAccuracy * 100) : "-") + ")";
    std::string cell = format("%.1f s", *f.timeToTarget);
    if (f.reached < f.completed) cell += " (" + std::to_string(f.reached) + "/" + std::to_string(f.completed) + ")";
    return cell;
}

// One row without its verdict. `base`: samples/s of the same mode on 1 worker, `single`: of the
// single device (0: none; plain doubles, as GCC 12 takes optionals here for maybe-uninitialized).
std::vector<std::string> tableRow(const SweepPoint& p, const PointFigures& f, double base, double single,
                                  bool quick) {
    std::vector<std::string> row{modeName(p.mode), std::to_string(p.workers), p.batchLabel()};
    const double rate = f.throughput.value_or(0.0);
    std::string rateCell = rate > 0 ? thousands(rate) : "-";
    if (rate > 0 && f.completed > 1)
        rateCell +=
            " [" + thousands(f.throughputMin.value_or(0.0)) + "-" + thousands(f.throughputMax.value_or(0.0)) + "]";
    row.push_back(rateCell);
    const bool scaled = rate > 0 && base > 0;
    row.push_back(scaled ? format("%.2f", rate / base) : "-");
    row.push_back(scaled ? format("%.0f %%", 100.0 * rate / (p.workers * base)) : "-");
    row.push_back(rate > 0 && single > 0 && p.mode != Mode::Single ? format("%.2f", rate / single) : "-");
    row.push_back(targetCell(f, quick));
    row.push_back(orDash(f.stepAtTarget, "%.0f"));
    row.push_back(orDash(f.epochsAtTarget, "%.2f"));
    row.push_back(percent(f.computeShare));
    row.push_back(p.mode == Mode::Single ? "-" : percent(f.commShare));
    row.push_back(p.mode == Mode::Single ? "-" : percent(f.waitShare));
    row.push_back(f.stalenessMean ? format("%.1f", *f.stalenessMean) + " / " + orDash(f.stalenessP95, "%.0f") : "-");
    row.push_back(f.completed ? format("%.1f", f.othersCpusMax) : "-");
    return row;
}

}  // namespace

void printScalingTable(std::FILE* out, const Workload& workload, const std::vector<PointResults>& points,
                       const TableSettings& settings) {
    std::vector<PointFigures> figures;
    for (const auto& p : points) figures.push_back(summarize(p));
    auto figuresOf = [&](auto&& match) -> const PointFigures* {
        for (size_t i = 0; i < points.size(); ++i)
            if (match(points[i].point)) return &figures[i];
        return nullptr;
    };
    const PointFigures* singleFigures = figuresOf([](const SweepPoint& s) { return s.mode == Mode::Single; });
    const double single = singleFigures ? singleFigures->throughput.value_or(0.0) : 0.0;

    std::optional<double> target;
    for (const auto& f : figures) target = target ? target : f.targetAccuracy;
    std::fprintf(out, "\n%s: target %s, batch %lld, %d thread(s) per worker, %u cores%s\n", workload.title.c_str(),
                 target ? format("%.1f %%", *target * 100.0).c_str() : "-", static_cast<long long>(workload.batch),
                 points.empty() ? 1 : points[0].point.threads, settings.cores,
                 settings.quick ? " (quick: step limit, no evaluation)" : "");

    std::vector<std::vector<std::string>> rows{{"mode", "N", "batch/step", "samples/s", "speed-up", "eff.",
                                                "vs single", "time to target", "step", "epochs", "compute", "comm",
                                                "wait", "staleness", "others", "bound by"}};
    std::vector<std::string> notes;
    for (size_t i = 0; i < points.size(); ++i) {
        const SweepPoint& p = points[i].point;
        const PointFigures& f = figures[i];
        const Mode mode = p.mode;
        const PointFigures* base =
            figuresOf([mode](const SweepPoint& s) { return s.mode == mode && s.workers == 1; });
        const double baseRate = base ? base->throughput.value_or(0.0) : 0.0;
        std::vector<std::string> row = tableRow(p, f, baseRate, single, settings.quick);
        std::string verdict = f.completed ? boundBy(p, f, base, settings.cores) : f.runs ? "no figures" : "not run";
        for (const auto& r : points[i].runs) {
            if (r.completed()) continue;
            notes.push_back(p.runName(settings.quick) + ": " + problemOf(r));
            verdict += " (" + std::to_string(notes.size()) + ")";
        }
        row.push_back(verdict);
        rows.push_back(std::move(row));
    }
    printColumns(out, rows);
    for (size_t n = 0; n < notes.size(); ++n) std::fprintf(out, "  (%zu) %s\n", n + 1, notes[n].c_str());
}

}  // namespace trainbench::bench
