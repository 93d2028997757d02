#pragma once
// Parses experiment-file text as strict JSON, reporting syntax errors by line and column and
// duplicate keys by key path (nlohmann would silently keep the last one).
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/experiment/issuelist.h"
#include "engine/util/jsonlimits.h"

namespace trainbench::app {

// What an experiment file and a --set value may be (docs/experiment-format.md, "Limits"): far more
// than any real one needs (the shipped files are under 2 KB and 4 levels deep), little enough that
// reading, validating and expanding one cannot run out of memory, stack or time.
inline constexpr engine::JsonLimits kExperimentLimits{1u << 20, 32};

// The parsed document, or a discarded value after adding a "<source>:<line>:<column>" issue (a
// syntax error, or nesting over kExperimentLimits) or a "" issue (a text over its size).
nlohmann::json parseJsonText(const std::string& text, const std::string& sourceName, IssueList& issues);

// Checks text against kExperimentLimits. The message names the limit, the byte offset and the key
// path: "nesting deeper than 32 levels of { and [ (byte 57, at sweep.seed[0][0])".
struct LimitIssue {
    std::size_t offset;
    std::string message;
};
std::optional<LimitIssue> checkExperimentLimits(const std::string& text);

// 1-based line and column (in characters, not bytes) of a 0-based byte offset into text.
struct TextPosition {
    std::size_t line = 1;
    std::size_t column = 1;
};
TextPosition textPosition(const std::string& text, std::size_t byteOffset);

}  // namespace trainbench::app
