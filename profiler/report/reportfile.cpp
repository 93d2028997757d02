#include "profiler/report/reportfile.h"

#include "profiler/report/reporterror.h"
#include "profiler/trace/atomicfile.h"
#include "profiler/trace/traceerror.h"

namespace trainbench::profiler {

void writeReportFile(const std::string& path, std::string_view bytes, const char* what) {
    if (path.empty()) throw ReportError(std::string("no file name given for the ") + what);
    try {
        AtomicFile file(path, what);
        file.append(bytes);
        file.commit();
    } catch (const TraceError& e) {
        throw ReportError(e.what());
    }
}

}  // namespace trainbench::profiler
