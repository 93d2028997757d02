#pragma once
// The link the collective-model tests price messages on: 5 µs latency, 10 GB/s.

#include "engine/emulation/topology.h"

namespace trainbench::engine::test {

inline const LinkParams kLink = LinkParams::fromBandwidth(5e-6, 10e9);

}  // namespace trainbench::engine::test
