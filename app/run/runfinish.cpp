#include "app/run/runfinish.h"

namespace trainbench::app {

void finishRun(RunOutcome& out, const std::optional<engine::RunSummary>& summary, profiler::RunWriter* writer,
               const RunProfiler* profile, const std::string& dbPath) {
    if (summary) {
        out.summary = *summary;
        out.status = summary->stop_reason == engine::StopReason::Stopped ? profiler::RunStatus::Stopped : profiler::RunStatus::Completed;
        if (out.status == profiler::RunStatus::Stopped) out.message = "stopped by the user after step " +
                                                                     std::to_string(summary->steps);
    } else {
        out.status = profiler::RunStatus::Failed;
    }
    if (!out.outputError.empty()) out.message += (out.message.empty() ? "" : "; ") + out.outputError;
    if (writer) {
        writer->finish(out.status, out.summary, out.message);
        if (summary) {
            if (profile) profile->calibrate();
            out.verdict = RunProfiler::classifyStored(dbPath, out.id);
        }
    }
}

}  // namespace trainbench::app
