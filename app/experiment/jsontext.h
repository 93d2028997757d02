#pragma once
// Parses experiment-file text as strict JSON, reporting syntax errors by line and column and
// duplicate keys by key path (nlohmann would silently keep the last one).
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "app/experiment/issuelist.h"

namespace trainbench::app {

// The parsed document, or a discarded value after adding a "<source>:<line>:<column>" issue.
nlohmann::json parseJsonText(const std::string& text, const std::string& sourceName, IssueList& issues);

// 1-based line and column (in characters, not bytes) of a 0-based byte offset into text.
struct TextPosition {
    std::size_t line = 1;
    std::size_t column = 1;
};
TextPosition textPosition(const std::string& text, std::size_t byteOffset);

}  // namespace trainbench::app
