#pragma once
// The devices plan-serving considers: every fixed-figure device of the catalog at each inference
// precision it runs, priced per replica, with the latency of a batch of n estimated from the
// model's op graph (engine/emulation/inferenceestimate.h), cached per batch size.
#include <vector>

#include "app/experiment/experiment.h"
#include "app/plan/servingplan.h"
#include "engine/emulation/devicecatalog.h"

namespace trainbench::app {

// A device whose figures come from a calibration (cpu-host) is left out. A target that cannot run
// the model at batch 1 (no rate at that precision, too little memory) carries why_not; a larger
// batch that does not fit takes forever (the simulation then refuses its queries).
std::vector<ServingTarget> emulatedServingTargets(const Experiment& x, const engine::DeviceCatalog& catalog,
                                                  const std::vector<engine::Precision>& precisions);

}  // namespace trainbench::app
