// A device catalog on arbitrary bytes, from a file (DeviceCatalog::load) and from memory (parse),
// with the same outcome. Every refusal must be a DeviceCatalogError whose lines each start with the
// source; a catalog that loads has unique ids, each found again by find().
#include <set>
#include <string>

#include "engine/emulation/devicecatalog.h"
#include "fuzzfile.h"

using namespace trainbench::engine;
using trainbench::fuzz::FuzzFile;
using trainbench::fuzz::mismatch;

namespace {

// The catalog's ids, or the error with the source name taken out (the two sources differ).
std::string outcome(const std::string& source, const auto& load) {
    try {
        const DeviceCatalog catalog = load();
        std::string ids;
        std::set<std::string> seen;
        for (const DeviceSpec& d : catalog.devices()) {
            if (!seen.insert(d.id).second) mismatch("duplicate id accepted: " + d.id);
            if (catalog.find(d.id) != &d) mismatch("find() does not return " + d.id);
            ids += d.id + "\n";
        }
        return ids;
    } catch (const DeviceCatalogError& e) {
        std::string lines = e.what(), out;
        for (size_t at = 0; at < lines.size();) {
            const size_t end = std::min(lines.find('\n', at), lines.size());
            if (lines.compare(at, source.size() + 2, source + ": ") != 0)
                mismatch("a line without the source: " + lines.substr(at, end - at));
            out += "error: " + lines.substr(at + source.size(), end - at - source.size()) + "\n";
            at = end + 1;
        }
        return out;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static FuzzFile file;
    const std::string& path = file.write(data, size);
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string fromMemory = outcome("fuzz.json", [&] { return DeviceCatalog::parse(text, "fuzz.json"); });
    const std::string fromFile = outcome(path, [&] { return DeviceCatalog::load(path); });
    if (fromMemory != fromFile) mismatch("memory:\n" + fromMemory + "file:\n" + fromFile);
    return 0;
}
