#include "app/experiment/pathresolution.h"

namespace trainbench::app {

std::string resolvePath(const std::string& value, const std::filesystem::path& base) {
    const std::filesystem::path p(value);
    if (value.empty() || p.is_absolute()) return value;
    return (base / p).lexically_normal().string();
}

void resolveRelativePaths(nlohmann::json& value, const SchemaKey& schema, const std::filesystem::path& base) {
    if (schema.type == SchemaType::Path && value.is_string()) {
        value = resolvePath(value.get<std::string>(), base);
    } else if (schema.type == SchemaType::Object && value.is_object()) {
        for (const SchemaKey& key : schema.keys)
            if (auto it = value.find(key.key); it != value.end()) resolveRelativePaths(*it, key, base);
    }
}

}  // namespace trainbench::app
