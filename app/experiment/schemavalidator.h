#pragma once
// Checks a parsed experiment document against the schema and fills in defaults.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/issuelist.h"
#include "app/experiment/schemakey.h"

namespace trainbench::app {

// Walks the document and the schema side by side: every unknown key, wrong type, out-of-range
// value, bad enum value and broken cross-key rule becomes one issue (with its key path), and
// validation carries on, so a user sees all problems of a file at once.
class SchemaValidator {
public:
    explicit SchemaValidator(IssueList& issues) : issues_(issues) {}

    // The document with every default filled in; only meaningful if no issues were added.
    nlohmann::json resolve(const SchemaKey& root, const nlohmann::json& document);

private:
    nlohmann::json resolveObject(const SchemaKey& schema, const nlohmann::json& value, const std::string& path);
    // Known keys of one object (a section or a layer): validated values plus defaults.
    void resolveFields(const std::vector<SchemaKey>& keys, const nlohmann::json& value, const std::string& path,
                       nlohmann::json& out);
    std::optional<nlohmann::json> resolveValue(const SchemaKey& key, const nlohmann::json& value, const std::string& path);
    std::optional<nlohmann::json> resolveInteger(const SchemaKey& key, const nlohmann::json& value, const std::string& path);
    std::optional<nlohmann::json> resolveLayers(const SchemaKey& key, const nlohmann::json& value, const std::string& path);
    std::optional<nlohmann::json> resolveLayer(const SchemaKey& key, const nlohmann::json& value, const std::string& path);
    // The sweep section: every key path names a key that can be swept, every value is valid for it.
    void checkSweep(const nlohmann::json& value, const std::string& path);
    bool checkEnum(const std::string& what, const std::vector<std::string>& choices, const nlohmann::json& value,
                   const std::string& path);

    void typeIssue(const SchemaKey& key, const nlohmann::json& value, const std::string& path);
    void rangeIssue(const SchemaKey& key, const nlohmann::json& value, const std::string& path);

    IssueList& issues_;
    const SchemaKey* root_ = nullptr;
};

// "train" + "batch_size" -> "train.batch_size"; "" + "seed" -> "seed".
std::string joinKeyPath(const std::string& parent, const std::string& key);

}  // namespace trainbench::app
