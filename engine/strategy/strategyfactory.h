#pragma once
// The one place a strategy is made: its kind picks the class, the spec gives it what it is built
// from. A new kind is a case here (and a class of its own).
#include <memory>

#include "engine/strategy/strategy.h"
#include "engine/strategy/strategyspec.h"

namespace trainbench::engine {

// Throws std::invalid_argument when the spec lacks what its kind needs (a job for multi_worker and
// parameter_server), and whatever the strategy's constructor throws (CollectiveError when a
// multi_worker rank cannot join its group, ConnectionError when a coordinator cannot listen).
std::unique_ptr<Strategy> makeStrategy(const StrategySpec& spec);

}  // namespace trainbench::engine
