#pragma once
// The folder of a run store, and how the store records paths so that the folder can be moved or
// copied whole: a path inside the folder (a run's checkpoint beside the store, data or experiment
// files kept with it) is recorded relative to it as "./<path>"; any other path is recorded as
// given. Readers turn "./<path>" back into <folder>/<path> for the folder the store is opened in.
// Values that do not begin with "./" read as recorded, which is how stores of earlier versions
// (absolute paths only) keep reading as before. docs/run-store.md, "Paths".
#include <filesystem>
#include <string>

namespace trainbench::profiler {

class RunStoreFolder {
public:
    // storePath: the store file as opened (relative paths are taken from the current directory).
    explicit RunStoreFolder(const std::string& storePath);

    const std::filesystem::path& path() const { return folder_; }

    // One path: "./<relative>" for an absolute path inside the folder, else unchanged.
    std::string recorded(const std::string& path) const;
    // A recorded value: "./<relative>" becomes <folder>/<relative>; anything else is unchanged.
    std::string resolved(const std::string& value) const;

    // A description naming paths: every "<folder>/" that begins a word becomes "./", and back.
    std::string recordedText(const std::string& text) const;
    std::string resolvedText(const std::string& text) const;

    // A resolved experiment (runs.config_json): the values of experimentPathKeys() as above. Text
    // in which no value changes (or that is not JSON) is returned as it is.
    std::string recordedConfig(const std::string& json) const;
    std::string resolvedConfig(const std::string& json) const;

    // A run attribute's value, by attributeKind(key).
    std::string recordedAttribute(const std::string& key, const std::string& value) const;
    std::string resolvedAttribute(const std::string& key, const std::string& value) const;

private:
    std::filesystem::path folder_;
    std::string prefix_;  // folder_ with one trailing '/'
};

}  // namespace trainbench::profiler
