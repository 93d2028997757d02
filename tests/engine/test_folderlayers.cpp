// The layering docs/architecture.md promises, read from the sources themselves: the libraries
// depend downwards only (engine <- profiler <- app <- ui), and the folders of engine/ form a stack
// in which a folder includes only folders below it, so no two folders import each other. A new
// folder has to be placed in the table below (and in docs/architecture.md) before it can build
// this test green.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;

// engine/'s folders from the bottom up, as in docs/architecture.md.
const std::vector<std::string> kEngineStack = {
    "instrument",  // phase and op instrumentation (no dependencies)
    "util",        // errors, hashing, JSON limits, small kernels
    "io",          // the atomic file writer
    "tensor",      //
    "device",      // the real CPU device (oneDNN engine and stream)
    "layers",      //
    "model",       //
    "optim",       //
    "data",        // sources, records (TFRecord), storage, the input pipeline
    "checkpoint",  //
    "graph",       // the inference graph IR: from a model or a checkpoint, BN folding, fused ReLU, reference evaluator
    "inference",   // the oneDNN executor of inference graphs
    "onnx",        // ONNX export and import of inference graphs (libonnx's protobuf classes)
    "telemetry",   // step, evaluation and run records; the clock they are measured on
    "net",         // Asio server/client scaffolding, framing, addresses, deadlines
    "rendezvous",  // the rendezvous store of multi_worker jobs (not the run store)
    "collective",  // shared-memory and Gloo collectives
    "emulation",   // device catalog, cost model, virtual clock, collectives model, topologies
    "strategy",    // distribution strategies
    "train",       // the trainer
    "serving",     // the inference server: HTTP (TF Serving's REST API), dynamic batching, metrics
};
// The libraries from the bottom up (bench and tests may use any of them).
const std::vector<std::string> kLibraries = {"engine", "profiler", "app", "ui"};

struct Include {
    fs::path file;
    std::string target;  // "engine/strategy/strategy.h"
};

std::vector<Include> includesUnder(const fs::path& root) {
    static const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+/[^"]+)")re");
    std::vector<Include> out;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".inl")) continue;
        std::ifstream in(entry.path());
        std::string line;
        std::smatch m;
        while (std::getline(in, line))
            if (std::regex_search(line, m, include)) out.push_back({entry.path(), m[1].str()});
    }
    return out;
}

std::string firstPart(const std::string& path) { return path.substr(0, path.find('/')); }

int rankOf(const std::vector<std::string>& stack, const std::string& name) {
    const auto it = std::find(stack.begin(), stack.end(), name);
    return it == stack.end() ? -1 : static_cast<int>(it - stack.begin());
}

const fs::path kSource = TRAINBENCH_SOURCE_DIR;

TEST(FolderLayers, EveryEngineFolderIsInTheStack) {
    for (const auto& entry : fs::directory_iterator(kSource / "engine"))
        if (entry.is_directory()) {
            EXPECT_GE(rankOf(kEngineStack, entry.path().filename().string()), 0)
                << entry.path() << " is not in kEngineStack (place it there and in docs/architecture.md)";
        }
}

TEST(FolderLayers, EngineFoldersIncludeOnlyFoldersBelowThem) {
    std::set<std::string> violations;
    for (const Include& inc : includesUnder(kSource / "engine")) {
        if (firstPart(inc.target) != "engine") continue;
        const std::string from = fs::relative(inc.file, kSource / "engine").begin()->string();
        const std::string to = firstPart(inc.target.substr(std::string("engine/").size()));
        if (from == to) continue;
        if (rankOf(kEngineStack, to) < 0 || rankOf(kEngineStack, to) > rankOf(kEngineStack, from))
            violations.insert(fs::relative(inc.file, kSource).string() + " includes " + inc.target);
    }
    std::string all;
    for (const std::string& v : violations) all += "\n  " + v;
    EXPECT_TRUE(violations.empty()) << "engine/ folders including a folder above them:" << all;
}

TEST(FolderLayers, LibrariesIncludeOnlyLibrariesBelowThem) {
    std::set<std::string> violations;
    for (const std::string& lib : kLibraries) {
        for (const Include& inc : includesUnder(kSource / lib)) {
            const int to = rankOf(kLibraries, firstPart(inc.target));
            if (to > rankOf(kLibraries, lib))
                violations.insert(fs::relative(inc.file, kSource).string() + " includes " + inc.target);
        }
    }
    std::string all;
    for (const std::string& v : violations) all += "\n  " + v;
    EXPECT_TRUE(violations.empty()) << "includes going up a layer:" << all;
}

// The GUI gets the profiler's read-side types (profiler::StepSample, the run rows) and never the
// engine's records or anything else of the engine.
TEST(FolderLayers, TheGuiIncludesNoEngineHeader) {
    std::set<std::string> violations;
    for (const Include& inc : includesUnder(kSource / "ui"))
        if (firstPart(inc.target) == "engine")
            violations.insert(fs::relative(inc.file, kSource).string() + " includes " + inc.target);
    std::string all;
    for (const std::string& v : violations) all += "\n  " + v;
    EXPECT_TRUE(violations.empty()) << "ui/ including engine/:" << all;
}

// Nor does it name an engine type it could only get through a profiler header (an EvalRecord from
// RunStore::evals): it reads profiler::EvalSample and profiler::StepSample.
TEST(FolderLayers, TheGuiNamesNoEngineType) {
    static const std::regex engineName(R"re(\bengine::)re");
    std::set<std::string> violations;
    for (const auto& entry : fs::recursive_directory_iterator(kSource / "ui")) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
        std::ifstream in(entry.path());
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            const std::string code = line.substr(0, line.find("//"));
            if (std::regex_search(code, engineName))
                violations.insert(fs::relative(entry.path(), kSource).string() + ":" + std::to_string(number) + ": " + line);
        }
    }
    std::string all;
    for (const std::string& v : violations) all += "\n  " + v;
    EXPECT_TRUE(violations.empty()) << "ui/ naming engine:: types:" << all;
}

// Within app and ui, folders need no fixed order, but none may import a folder that imports it
// back, directly or through others. (profiler/ is not there yet: its machine caches live in the
// run store's tables, so profiler/machine and profiler/store still use each other.)
TEST(FolderLayers, AppAndUiHaveNoFolderCycle) {
    for (const std::string& lib : {std::string("app"), std::string("ui")}) {
        std::map<std::string, std::set<std::string>> uses;
        for (const Include& inc : includesUnder(kSource / lib)) {
            if (firstPart(inc.target) != lib) continue;
            const fs::path rel = fs::relative(inc.file, kSource / lib);
            if (std::distance(rel.begin(), rel.end()) < 2) continue;  // a file at the library's top
            const std::string from = rel.begin()->string();
            const std::string to = firstPart(inc.target.substr(lib.size() + 1));
            if (from != to && inc.target.find('/', lib.size() + 1) != std::string::npos) uses[from].insert(to);
        }
        // Depth-first search; a folder met again while on the path closes a cycle.
        std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
        std::vector<std::string> path;
        std::string cycle;
        std::function<void(const std::string&)> visit = [&](const std::string& folder) {
            state[folder] = 1;
            path.push_back(folder);
            for (const std::string& next : uses[folder]) {
                if (!cycle.empty()) break;
                if (state[next] == 1) {
                    for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it)
                        cycle += lib + "/" + *it + " -> ";
                    cycle += lib + "/" + next;
                } else if (state[next] == 0) {
                    visit(next);
                }
            }
            path.pop_back();
            state[folder] = 2;
        };
        for (const auto& [folder, targets] : uses)
            if (state[folder] == 0 && cycle.empty()) visit(folder);
        EXPECT_TRUE(cycle.empty()) << "folders importing each other: " << cycle;
    }
}

// The scan itself: a header that includes upwards is found (so the tests above cannot pass by
// reading nothing).
TEST(FolderLayers, TheScanFindsIncludes) {
    const std::vector<Include> found = includesUnder(kSource / "engine" / "train");
    const bool trainerIncludesStrategy = std::any_of(found.begin(), found.end(), [](const Include& i) {
        return i.target == "engine/strategy/strategy.h";
    });
    EXPECT_TRUE(trainerIncludesStrategy);
    EXPECT_LT(rankOf(kEngineStack, "strategy"), rankOf(kEngineStack, "train"));
}

}  // namespace
}  // namespace trainbench::engine
