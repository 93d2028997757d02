#pragma once
// What one check of the crash loop found: the violations (each a sentence naming the run, step or
// file) and facts for the loop's summary (key = value, printed one per line).
#include <string>
#include <utility>
#include <vector>

namespace trainbench::crashloop {

struct CrashReport {
    std::vector<std::string> violations;
    std::vector<std::pair<std::string, std::string>> facts;

    void violation(std::string what) { violations.push_back(std::move(what)); }
    void fact(std::string key, std::string value) { facts.emplace_back(std::move(key), std::move(value)); }
};

}  // namespace trainbench::crashloop
