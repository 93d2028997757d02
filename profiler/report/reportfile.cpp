#include "profiler/report/reportfile.h"

#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"
#include "profiler/report/reporterror.h"

namespace trainbench::profiler {

void writeReportFile(const std::string& path, std::string_view bytes, const char* what) {
    if (path.empty()) throw ReportError(std::string("no file name given for the ") + what);
    try {
        engine::writeFileAtomically(path, bytes, {.what = what});
    } catch (const engine::FileWriteError& e) {
        throw ReportError(e.what());
    }
}

}  // namespace trainbench::profiler
