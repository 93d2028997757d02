// `trainbench-cli report RUN... --html OUT | --pdf OUT`: the report the GUI exports, headless.
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "profiler/report/report.h"
#include "profiler/store/storeerror.h"

namespace trainbench::cli {

int reportCommand(const ReportArgs& args) {
    if (args.html.empty() && args.pdf.empty()) {
        std::fprintf(stderr, "report: say where to write it: --html FILE and/or --pdf FILE\n");
        return kExitUsage;
    }
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    profiler::ReportData data;
    try {
        std::vector<profiler::RunId> ids;
        for (const std::string& run : args.runs) {
            auto row = findOrComplain(*store, run, code);
            if (!row) return code;
            ids.push_back(row->id);
        }
        data = profiler::collectReport(*store, ids);
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    } catch (const profiler::ReportError& e) {
        std::fprintf(stderr, "report: %s\n", e.what());
        return kExitNotFound;
    }
    try {
        if (!args.html.empty()) {
            profiler::writeHtml(data, args.html);
            std::printf("wrote %s (HTML, %zu run(s))\n", args.html.c_str(), data.runs.size());
        }
        if (!args.pdf.empty()) {
            profiler::writePdf(data, args.pdf);
            std::printf("wrote %s (PDF, %zu run(s))\n", args.pdf.c_str(), data.runs.size());
        }
    } catch (const profiler::ReportError& e) {
        std::fprintf(stderr, "report: %s\n", e.what());
        return kExitIo;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
