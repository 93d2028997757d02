#include "ui/models/configdiffmodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <set>

#include "profiler/report/configdiff.h"

namespace trainbench::ui {

namespace {

// Key paths as the report's config diff writes them (profiler::flattenJson), strings shown bare.
std::map<std::string, std::string> flatten(const nlohmann::json& config) {
    std::map<std::string, std::string> out;
    for (auto& [key, text] : profiler::flattenJson(config)) {
        const nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
        out[key] = v.is_string() ? v.get<std::string>() : text;
    }
    return out;
}

}  // namespace

ConfigDiffModel::ConfigDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void ConfigDiffModel::setConfigs(const QStringList& titles, const std::vector<std::string>& configJson) {
    beginResetModel();
    titles_ = titles;
    std::vector<std::map<std::string, std::string>> flat;
    std::set<std::string> keys;
    for (const std::string& text : configJson) {
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        flat.push_back(j.is_discarded() ? std::map<std::string, std::string>{{"(config)", "not JSON"}} : flatten(j));
        for (const auto& [k, v] : flat.back()) keys.insert(k);
    }
    all_.clear();
    for (const std::string& k : keys) {
        Row row{k, {}, false};
        for (const auto& f : flat) {
            auto it = f.find(k);
            row.values.push_back(it == f.end() ? std::string() : it->second);
        }
        for (const auto& v : row.values) row.differs = row.differs || v != row.values.front();
        all_.push_back(std::move(row));
    }
    rebuild();
    endResetModel();
}

void ConfigDiffModel::setDifferencesOnly(bool on) {
    if (on == differencesOnly_) return;
    beginResetModel();
    differencesOnly_ = on;
    rebuild();
    endResetModel();
}

void ConfigDiffModel::rebuild() {
    shown_.clear();
    for (const Row& r : all_)
        if (!differencesOnly_ || r.differs) shown_.push_back(&r);
}

QStringList ConfigDiffModel::keys() const {
    QStringList k;
    for (const Row* r : shown_) k << QString::fromStdString(r->key);
    return k;
}

int ConfigDiffModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(shown_.size());
}

int ConfigDiffModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 1 + static_cast<int>(titles_.size());
}

QVariant ConfigDiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(shown_.size())) return {};
    const Row& r = *shown_[static_cast<size_t>(index.row())];
    if (role == DiffersRole) return r.differs;
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        if (index.column() == 0) return QString::fromStdString(r.key);
        const auto& v = r.values[static_cast<size_t>(index.column() - 1)];
        if (role == Qt::ToolTipRole && v.empty()) return tr("not set in this run's experiment");
        return QString::fromStdString(v);
    }
    if (role == Qt::FontRole && r.differs) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::BackgroundRole && r.differs && index.column() > 0) return QBrush(QColor(255, 200, 0, 60));
    return {};
}

QVariant ConfigDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return tr("key");
    if (section - 1 < titles_.size()) return titles_[section - 1];
    return {};
}

}  // namespace trainbench::ui
