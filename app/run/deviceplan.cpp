#include "app/run/deviceplan.h"

#include <stdexcept>

#include "engine/device/devicecatalog.h"
#include "engine/device/tpuslice.h"

namespace trainbench::app {

namespace {

engine::DeviceCatalog catalogOf(const Experiment& x) {
    if (x.device.catalog.empty()) return engine::DeviceCatalog::builtin();
    return engine::DeviceCatalog::load(x.device.catalog);
}

engine::Precision precisionOf(const Experiment& x, const engine::DeviceSpec& spec) {
    if (x.device.precision == "auto") return spec.kind == engine::DeviceKind::Tpu ? engine::Precision::Bf16
                                                                                 : engine::Precision::Fp32;
    return engine::parsePrecision(x.device.precision);
}

// GPUs of one server: NVSwitch (A100 and H100 HGX boards) is a switch; V100 boards link GPUs in a
// ring of NVLinks. The datasheets give all links together, both directions: half goes each way.
engine::Topology gpuTopology(const engine::DeviceSpec& spec, int replicas) {
    const engine::GpuLinks links = spec.links.value_or(engine::GpuLinks{});
    const double perDirection = links.nvlink_bytes_per_s > 0 ? links.nvlink_bytes_per_s / 2 : links.pcie_bytes_per_s / 2;
    const auto link = engine::LinkParams::fromBandwidth(links.latency_s, perDirection);
    if (spec.id.rfind("v100", 0) == 0) return engine::bidirectionalRingTopology(replicas, link);
    return engine::switchTopology(replicas, link);
}

}  // namespace

DevicePlan planDevices(const Experiment& x) {
    const engine::DeviceCatalog catalog = catalogOf(x);
    DevicePlan p;
    p.emulated = x.device.emulated();
    const std::string id = p.emulated ? x.device.type : "cpu-host";
    const engine::DeviceSpec* spec = catalog.find(id);
    if (!spec) {
        if (!p.emulated) return p;  // a user catalog without this host: no price, still a run
        catalog.get(id);            // throws, naming the known ids
    }
    p.spec = *spec;
    if (x.device.price_per_hour >= 0) p.price_per_device_hour = x.device.price_per_hour;
    else if (spec->price_per_hour > 0) p.price_per_device_hour = spec->price_per_hour;
    if (!p.emulated) {
        p.devices = "cpu";
        return p;
    }
    p.precision = precisionOf(x, *spec);
    p.replica_memory_bytes = spec->replicaMemoryBytes();
    if (x.strategy.type == "tpu_pod") {
        const engine::TpuSlice slice = engine::parseTpuSlice(x.strategy.slice);
        const engine::TpuSpec& tpu = *spec->tpu;
        const auto ici = engine::LinkParams::fromBandwidth(tpu.ici_latency_s, tpu.ici_link_bytes_per_s);
        if (tpu.replica_is_chip) {
            // v4 megacore: one replica per chip, the chip torus alone.
            p.replicas = slice.chips();
            p.topology = engine::torusTopology(slice.dims, slice.wrap, ici);
        } else {
            // The two TensorCores of a chip share its HBM: they exchange at half its bandwidth each way.
            const auto onChip = engine::LinkParams::fromBandwidth(tpu.ici_latency_s, spec->memory_bandwidth_bytes_per_s / 2);
            p.replicas = slice.cores;
            p.topology = engine::sliceTopology(slice, ici, onChip);
        }
        p.device_count = slice.chips();
        p.devices = spec->id + ":" + slice.name;
        return p;
    }
    p.replicas = x.strategy.type == "mirrored" ? x.strategy.replicas : 1;
    if (p.replicas > 1) p.topology = gpuTopology(*spec, p.replicas);
    // A TPU used as one device: one core (v2, v3) or one chip (v4); charged a whole chip.
    p.device_count = spec->kind == engine::DeviceKind::Tpu ? 1 : p.replicas;
    p.devices = spec->id + ":" + std::to_string(p.replicas);
    return p;
}

engine::VirtualClockConfig virtualClockConfig(const DevicePlan& plan, const Experiment& x, double infeed) {
    engine::VirtualClockConfig c;
    c.device = plan.spec;
    c.precision = plan.precision;
    c.replicas = plan.replicas;
    c.topology = plan.topology;
    c.bucket_bytes = x.strategy.bucket_mb * 1024.0 * 1024.0;
    c.overlap = x.strategy.overlap;
    c.infeed_seconds_per_batch = infeed;
    c.infeed_prefetch = engine::usesStreamingPipeline(x.data) ? x.data.pipeline.prefetch > 0 : true;
    return c;
}

}  // namespace trainbench::app
