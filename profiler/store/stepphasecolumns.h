#pragma once
// The step phases' columns of the steps and replica_steps tables, as the store's INSERTs and SELECTs
// name them: one list made from kStepPhases, so that a new phase needs no SQL edited here.
// tests/profiler/test_stepphases.cpp checks the migrated schema has each of them.
#include <string>

namespace trainbench::profiler {

enum class PhaseTable {
    Steps,         // every phase
    ReplicaSteps,  // the phases measured per replica (StepPhase::perReplica)
};

// ", input_seconds, forward_seconds, …" in kStepPhases order.
std::string phaseColumns(PhaseTable table);

// "?1, ?2, …, ?n": the parameters of an INSERT of n columns.
std::string sqlParameters(int n);

}  // namespace trainbench::profiler
