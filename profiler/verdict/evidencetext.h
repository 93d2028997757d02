#pragma once
// Number formatting for evidence sentences: one style for every finding ("23.4 %", "1.9 GB/s").
#include <string>

#include "profiler/verdict/verdict.h"

namespace trainbench::profiler::text {

// `value` with `digits` decimals ("%.*f").
std::string fixed(double value, int digits = 1);
// A fraction as a percentage with one decimal, without the sign: 0.234 -> "23.4".
std::string percent(double fraction);
// Bytes as MB (10^6) with one decimal.
std::string megabytes(double bytes);
// An evidence item whose value is a fraction shown in percent.
Evidence percentEvidence(std::string name, double fraction, std::string sentence);

}  // namespace trainbench::profiler::text
