#pragma once
// "Did you mean ...?" for misspelt keys and enum values in experiment files.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::app {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), ignoring case:
// "bach_size" -> "batch_size" is 1, "lerning_rate" -> "learning_rate" is 1, "Adam" -> "adam" is 0.
std::size_t editDistance(const std::string& a, const std::string& b);

// The candidate closest to word, if it is close enough to be a plausible typo (or word is a
// prefix of it, as in "batch" for "batch_size"); ties go to the earlier candidate.
std::optional<std::string> closestMatch(const std::string& word, const std::vector<std::string>& candidates);

// 'a', 'b', 'c' — for messages that list what is allowed.
std::string quotedList(const std::vector<std::string>& items);

}  // namespace trainbench::app
