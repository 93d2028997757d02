#include "engine/instrument/opstats.h"

#include <algorithm>
#include <map>

namespace trainbench::engine::prof {

OpStat::OpStat(OpCost cost)
    : cost_(std::move(cost)), label_(cost_.kind + " " + cost_.shape), site_{label_.c_str(), "op"} {}

OpStat* OpStats::add(OpCost cost) {
    std::lock_guard<std::mutex> lock(mutex_);
    return &ops_.emplace_back(std::move(cost));
}

namespace {
void addInto(std::vector<OpRow>& rows, std::map<std::pair<std::string, std::string>, size_t>& index, const OpRow& r) {
    auto key = std::make_pair(r.kind, r.shape);
    auto it = index.find(key);
    if (it == index.end()) {
        index.emplace(key, rows.size());
        rows.push_back(r);
        return;
    }
    OpRow& into = rows[it->second];
    into.calls += r.calls;
    into.seconds += r.seconds;
}
}  // namespace

std::vector<OpRow> OpStats::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<OpRow> rows;
    std::map<std::pair<std::string, std::string>, size_t> index;
    for (const OpStat& op : ops_) {
        const int64_t calls = op.calls();
        if (calls == 0) continue;
        OpRow r;
        r.kind = op.cost().kind;
        r.shape = op.cost().shape;
        r.calls = calls;
        r.seconds = static_cast<double>(op.nanoseconds()) * 1e-9;
        r.flops = op.cost().flops;
        r.bytes = op.cost().bytes;
        addInto(rows, index, r);
    }
    return rows;
}

std::vector<OpRow> mergeOpRows(const std::vector<std::vector<OpRow>>& perDevice) {
    std::vector<OpRow> rows;
    std::map<std::pair<std::string, std::string>, size_t> index;
    for (const auto& device : perDevice)
        for (const OpRow& r : device) addInto(rows, index, r);
    return rows;
}

std::vector<OpRow> opRowsSince(const std::vector<OpRow>& total, const std::vector<OpRow>& before) {
    std::map<std::pair<std::string, std::string>, const OpRow*> earlier;
    for (const OpRow& r : before) earlier.emplace(std::make_pair(r.kind, r.shape), &r);
    std::vector<OpRow> rows;
    for (OpRow r : total) {
        if (auto it = earlier.find({r.kind, r.shape}); it != earlier.end()) {
            r.calls -= it->second->calls;
            r.seconds -= it->second->seconds;
        }
        if (r.calls <= 0) continue;
        r.seconds = std::max(0.0, r.seconds);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string dimsText(const std::vector<int64_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s += 'x';
        s += std::to_string(dims[i]);
    }
    return s;
}

}  // namespace trainbench::engine::prof
