// The profiler's side of RunStore: per-op statistics, the input the classifier reads back for a
// stored run, and the stored verdict with its findings, timeline and actions.
#include <algorithm>
#include <map>

#include "profiler/machine/machinecache.h"
#include "profiler/store/database.h"
#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "profiler/store/statement.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

nlohmann::json evidenceJson(const std::vector<Evidence>& evidence) {
    nlohmann::json a = nlohmann::json::array();
    for (const Evidence& e : evidence) a.push_back({{"name", e.name}, {"value", e.value}, {"unit", e.unit}, {"text", e.text}});
    return a;
}

std::vector<Evidence> evidenceFrom(const std::string& text) {
    std::vector<Evidence> out;
    const nlohmann::json a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!a.is_array()) return out;
    for (const auto& e : a) {
        Evidence ev;
        ev.name = e.value("name", "");
        ev.value = e.value("value", 0.0);
        ev.unit = e.value("unit", "");
        ev.text = e.value("text", "");
        out.push_back(std::move(ev));
    }
    return out;
}

nlohmann::json changesJson(const std::vector<Change>& changes) {
    nlohmann::json a = nlohmann::json::array();
    for (const Change& c : changes) a.push_back({{"key", c.key}, {"from", c.from}, {"to", c.to}});
    return a;
}

std::vector<Change> changesFrom(const std::string& text) {
    std::vector<Change> out;
    const nlohmann::json a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!a.is_array()) return out;
    for (const auto& c : a) out.push_back({c.value("key", ""), c.value("from", nlohmann::json()), c.value("to", nlohmann::json())});
    return out;
}

std::optional<double> numberAttribute(const std::map<std::string, std::string>& attrs, const std::string& key) {
    auto it = attrs.find(key);
    if (it == attrs.end()) return std::nullopt;
    try {
        return std::stod(it->second);
    } catch (...) {
        return std::nullopt;
    }
}

// memory.splits as the run wrote it; entries that are not what it writes are left out.
std::vector<PipelineSplit> splitsFrom(const std::string& text) {
    std::vector<PipelineSplit> out;
    const nlohmann::json a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!a.is_array()) return out;
    auto number = [](const nlohmann::json& o, const char* key) {
        const auto it = o.find(key);
        return it != o.end() && it->is_number() ? it->get<double>() : -1.0;
    };
    for (const auto& o : a) {
        if (!o.is_object()) continue;
        PipelineSplit s;
        s.stages = static_cast<int>(number(o, "stages"));
        s.micro_batches = static_cast<int>(number(o, "micro_batches"));
        const auto recompute = o.find("recompute");
        s.recompute = recompute != o.end() && recompute->is_boolean() && recompute->get<bool>();
        s.needed_bytes = number(o, "needed_bytes");
        s.capacity_bytes = number(o, "capacity_bytes");
        s.activation_bytes = number(o, "activation_bytes");
        if (s.stages >= 2 && s.micro_batches >= 1 && s.needed_bytes >= 0 && s.capacity_bytes > 0 && s.activation_bytes >= 0)
            out.push_back(s);
    }
    return out;
}

}  // namespace

std::vector<OpStatRow> RunStore::opStats(RunId id) {
    Statement& query = db_->cached(
        "SELECT rank, kind, shape, calls, seconds, flops, bytes FROM op_stats WHERE run_id = ?1 "
        "ORDER BY rank, seconds DESC");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    std::vector<OpStatRow> rows;
    while (query.step()) {
        OpStatRow& r = rows.emplace_back();
        r.rank = static_cast<int>(query.columnInt(0));
        r.op.kind = query.columnText(1);
        r.op.shape = query.columnText(2);
        r.op.calls = query.columnInt(3);
        r.op.seconds = query.columnDouble(4);
        r.op.flops = query.columnDouble(5);
        r.op.bytes = query.columnDouble(6);
    }
    return rows;
}

ProfileInput RunStore::profileInput(RunId id) {
    const std::optional<RunRow> row = run(id);
    if (!row) throw StoreError(path_ + ": no run " + std::to_string(id.value));
    ProfileInput in;
    in.steps = steps(id);
    // Every rank of a multi_worker run runs the same ops; the lowest rank's stand for the run.
    const std::vector<OpStatRow> ops = opStats(id);
    for (const OpStatRow& r : ops)
        if (r.rank == ops.front().rank) in.ops.push_back(r.op);
    in.experiment = nlohmann::json::parse(row->config_json, nullptr, /*allow_exceptions=*/false);
    if (in.experiment.is_discarded()) in.experiment = nlohmann::json::object();
    const std::optional<engine::StrategyKind> strategy = engine::parseStrategyKind(row->strategy);
    if (!strategy)
        throw StoreError(path_ + ": run " + std::to_string(id.value) + " has unknown strategy '" + row->strategy + "'");
    in.strategy = *strategy;
    in.replicas = static_cast<int>(row->replicas.value_or(1));
    in.threads = static_cast<int>(row->threads.value_or(0));

    std::map<std::string, std::string> attrs;
    for (auto& [k, v] : attributes(id)) attrs.emplace(k, v);
    if (auto threads = numberAttribute(attrs, runattr::kProfileThreads)) in.threads = static_cast<int>(*threads);
    if (auto cores = numberAttribute(attrs, runattr::kProfileHostCores)) in.host_cores = static_cast<int>(*cores);
    if (auto first = numberAttribute(attrs, runattr::kOpsFirstStep)) in.ops_first_step = static_cast<int64_t>(*first);
    in.roofs = cachedRoofs(*db_, row->host, in.threads);
    // A run on emulated devices carries its device's roofs: the roofline is the device's, not this host's.
    if (auto peak = numberAttribute(attrs, runattr::kRoofsPeakGflops)) {
        MachineRoofs r;
        r.host = attrs.count(runattr::kRoofsSource) ? attrs[runattr::kRoofsSource] : row->devices;
        r.threads = in.threads;
        r.peak_gflops = *peak;
        r.bandwidth_gbs = numberAttribute(attrs, runattr::kRoofsBandwidthGbs).value_or(0.0);
        in.roofs = r;
    }
    if (auto device = numberAttribute(attrs, runattr::kMemoryDeviceBytes)) {
        MemoryFootprint m;
        m.params_bytes = numberAttribute(attrs, runattr::kMemoryParamsBytes).value_or(0.0);
        m.grads_bytes = numberAttribute(attrs, runattr::kMemoryGradsBytes).value_or(0.0);
        m.optimizer_bytes = numberAttribute(attrs, runattr::kMemoryOptimizerBytes).value_or(0.0);
        m.activation_bytes = numberAttribute(attrs, runattr::kMemoryActivationBytes).value_or(0.0);
        m.peak_rss_bytes = numberAttribute(attrs, runattr::kMemoryPeakRssBytes).value_or(0.0);
        m.device_bytes = *device;
        m.device_source = attrs.count(runattr::kMemoryDeviceSource) ? attrs[runattr::kMemoryDeviceSource] : "";
        m.swapped_pages = static_cast<int64_t>(numberAttribute(attrs, runattr::kMemorySwappedPages).value_or(0.0));
        m.major_faults = static_cast<int64_t>(numberAttribute(attrs, runattr::kMemoryMajorFaults).value_or(0.0));
        if (attrs.count(runattr::kMemorySplits)) m.splits = splitsFrom(attrs[runattr::kMemorySplits]);
        in.memory = m;
    }
    return in;
}

std::optional<Verdict> RunStore::verdict(RunId id) {
    Statement& query = db_->cached(
        "SELECT scope, first_step, last_step, kind, severity, summary, evidence_json FROM findings "
        "WHERE run_id = ?1 ORDER BY seq");
    Statement::ResetGuard guard(query);
    query.bindInt(1, id.value);
    Verdict v;
    bool any = false;
    while (query.step()) {
        Finding f;
        const std::string scope = query.columnText(0);
        f.first_step = query.optionalInt(1).value_or(0);
        f.last_step = query.optionalInt(2).value_or(0);
        f.kind = boundKindFromName(query.columnText(3)).value_or(BoundKind::Balanced);
        f.severity = severityFromName(query.columnText(4)).value_or(Severity::Low);
        f.summary = query.columnText(5);
        f.evidence = evidenceFrom(query.columnText(6));
        if (!any) v.verdict = std::move(f);
        else if (scope == "window") v.windows.push_back(std::move(f));
        else v.findings.push_back(std::move(f));
        any = true;
    }
    if (!any) return std::nullopt;
    Statement& actions = db_->cached(
        "SELECT finding_kind, title, changes_json, expected, expected_speedup, rationale FROM actions "
        "WHERE run_id = ?1 ORDER BY number");
    Statement::ResetGuard actionsGuard(actions);
    actions.bindInt(1, id.value);
    while (actions.step()) {
        Action a;
        a.addresses = boundKindFromName(actions.columnText(0)).value_or(BoundKind::Balanced);
        a.title = actions.columnText(1);
        a.changes = changesFrom(actions.columnText(2));
        a.expected = actions.optionalText(3).value_or("");
        a.expected_speedup = actions.optionalDouble(4);
        a.rationale = actions.optionalText(5).value_or("");
        v.actions.push_back(std::move(a));
    }
    return v;
}

void RunStore::saveVerdict(RunId id, const Verdict& v) {
    requireWritable("store a verdict");
    Transaction transaction(*db_);
    Statement& clearFindings = db_->cached("DELETE FROM findings WHERE run_id = ?1");
    clearFindings.bindInt(1, id.value).run();
    Statement& clearActions = db_->cached("DELETE FROM actions WHERE run_id = ?1");
    clearActions.bindInt(1, id.value).run();
    Statement& insertFinding = db_->cached(
        "INSERT INTO findings (run_id, seq, scope, first_step, last_step, kind, severity, summary, evidence_json) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    int64_t seq = 0;
    auto put = [&](const Finding& f, const char* scope) {
        insertFinding.bindInt(1, id.value)
            .bindInt(2, seq++)
            .bindText(3, std::string_view(scope))
            .bindInt(4, f.first_step)
            .bindInt(5, f.last_step)
            .bindText(6, std::string_view(boundKindName(f.kind)))
            .bindText(7, std::string_view(severityName(f.severity)))
            .bindText(8, std::string_view(f.summary))
            .bindText(9, std::string_view(evidenceJson(f.evidence).dump()));
        insertFinding.run();
    };
    put(v.verdict, "run");
    for (const Finding& f : v.findings) put(f, "run");
    for (const Finding& f : v.windows) put(f, "window");
    Statement& insertAction = db_->cached(
        "INSERT INTO actions (run_id, number, finding_kind, title, changes_json, expected, expected_speedup, rationale) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    int64_t number = 1;
    for (const Action& a : v.actions) {
        insertAction.bindInt(1, id.value)
            .bindInt(2, number++)
            .bindText(3, std::string_view(boundKindName(a.addresses)))
            .bindText(4, std::string_view(a.title))
            .bindText(5, std::string_view(changesJson(a.changes).dump()))
            .bindText(6, std::string_view(a.expected))
            .bindDouble(7, a.expected_speedup)
            .bindText(8, std::string_view(a.rationale));
        insertAction.run();
    }
    Statement& setVerdict = db_->cached("UPDATE runs SET verdict = ?2 WHERE id = ?1");
    const std::string verdictText = std::string(boundKindName(v.verdict.kind)) + " (" + severityName(v.verdict.severity) + ")";
    setVerdict.bindInt(1, id.value).bindText(2, std::string_view(verdictText));
    setVerdict.run();
    transaction.commit();
}

}  // namespace trainbench::profiler
