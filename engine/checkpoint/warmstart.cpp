#include "engine/checkpoint/warmstart.h"

#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"

namespace trainbench::engine {

void warmStartFrom(const Checkpoint& ck, Model& model, Optimizer& optimizer, const WarmStartOptions& options) {
    checkModelLayout(ck, model);
    if (!options.carry_optimizer) {
        restoreParams(ck, model.params(), model.paramCount(), model.state());
        return;
    }
    restoreTraining(ck, model.params(), model.paramCount(), optimizer, model.state());
    optimizer.setStepsBefore(options.optimizer_steps);
}

}  // namespace trainbench::engine
