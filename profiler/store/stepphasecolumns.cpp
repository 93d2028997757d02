#include "profiler/store/stepphasecolumns.h"

#include "profiler/verdict/stepsample.h"

namespace trainbench::profiler {

std::string phaseColumns(PhaseTable table) {
    std::string out;
    for (const StepPhase& p : kStepPhases)
        if (table == PhaseTable::Steps || p.perReplica) out += ", " + std::string(p.column);
    return out;
}

std::string sqlParameters(int n) {
    std::string out;
    for (int i = 1; i <= n; ++i) out += (i > 1 ? ", ?" : "?") + std::to_string(i);
    return out;
}

}  // namespace trainbench::profiler
