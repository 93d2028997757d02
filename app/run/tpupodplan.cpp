#include "app/run/tpupodplan.h"

#include "engine/emulation/tpuslice.h"

namespace trainbench::app {

void planTpuPod(DevicePlan& p, const Experiment& x, const engine::DeviceSpec& spec) {
    const engine::TpuSlice slice = engine::parseTpuSlice(x.strategy.slice);
    const engine::TpuSpec& tpu = *spec.tpu;
    const auto ici = engine::LinkParams::fromBandwidth(tpu.ici_latency_s, tpu.ici_link_bytes_per_s);
    if (tpu.replica_is_chip) {
        // v4 megacore: one replica per chip, the chip torus alone.
        p.replicas = slice.chips();
        p.topology = engine::torusTopology(slice.dims, slice.wrap, ici);
    } else {
        // The two TensorCores of a chip share its HBM: they exchange at half its bandwidth each way.
        const auto onChip = engine::LinkParams::fromBandwidth(tpu.ici_latency_s, spec.memory_bandwidth_bytes_per_s / 2);
        p.replicas = slice.cores;
        p.topology = engine::sliceTopology(slice, ici, onChip);
    }
    p.device_count = slice.chips();
    p.devices = spec.id + ":" + slice.name;
}

}  // namespace trainbench::app
