#pragma once
// Writes an output file of the report whole or not at all (engine::AtomicFileWriter), with errors as
// ReportErrors naming the path.
#include <string>
#include <string_view>

namespace trainbench::profiler {

void writeReportFile(const std::string& path, std::string_view bytes, const char* what);

}  // namespace trainbench::profiler
