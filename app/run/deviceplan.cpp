#include "app/run/deviceplan.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "app/run/tpupodplan.h"
#include "engine/emulation/devicecatalog.h"
#include "profiler/machine/hostmodel.h"
#include "profiler/machine/machinecache.h"
#include "profiler/machine/memoryprobe.h"

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
// One direction of the link between two GPUs of a node: NVLink when they have it, else PCIe.
engine::LinkParams gpuLink(const engine::DeviceSpec& spec) {
    const engine::GpuLinks links = spec.links.value_or(engine::GpuLinks{});
    const double perDirection = links.nvlink_bytes_per_s > 0 ? links.nvlink_bytes_per_s / 2 : links.pcie_bytes_per_s / 2;
    return engine::LinkParams::fromBandwidth(links.latency_s, perDirection);
}

engine::Topology gpuTopology(const engine::DeviceSpec& spec, int replicas) {
    const auto link = gpuLink(spec);
    if (spec.id.rfind("v100", 0) == 0) return engine::bidirectionalRingTopology(replicas, link);
    return engine::switchTopology(replicas, link);
}

// This host as the emulated device: replicas placed as a real run here would place them (threads
// split over mirrored replicas or worker processes), each timed by the kernel rates of its own
// thread count; mirrored replicas exchange in shared memory, workers over loopback TCP.
void planHost(DevicePlan& p, const Experiment& x, const HostCalibrator& calibrate, int jobWorkers) {
    if (!calibrate)
        throw std::invalid_argument("device.type \"cpu-host\" is timed from this host's calibration, which needs a run store");
    const engine::StrategyKind kind = x.strategy.type;
    if (kind == engine::StrategyKind::ParameterServer || kind == engine::StrategyKind::TpuPod ||
        kind == engine::StrategyKind::Pipeline || kind == engine::StrategyKind::Tensor)
        throw std::invalid_argument("strategy.type: '" + std::string(engine::strategyKindName(kind)) +
                                    "' is not modelled on device.type \"cpu-host\" "
                                    "(this host as an emulated device takes 'single', 'mirrored' and 'multi_worker')");
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = x.train.threads > 0 ? x.train.threads : cores;
    const bool mirrored = kind == engine::StrategyKind::Mirrored, workers = kind == engine::StrategyKind::MultiWorker;
    p.replicas = mirrored ? x.strategy.replicas : workers ? (jobWorkers > 0 ? jobWorkers : x.strategy.replicas) : 1;
    const int perReplica = x.strategy.threads_per_replica > 0 && (mirrored || workers)
                               ? x.strategy.threads_per_replica
                               : std::max(1, threads / p.replicas);
    const HostCalibration host = calibrate(p.spec, perReplica, p.replicas);
    p.spec = host.spec;
    p.exchange_takes_cores = p.replicas > 1 && p.replicas * perReplica >= cores;
    p.host_pipeline = true;
    if (workers) p.network = host.loopback;  // the job's processes meet over loopback TCP
    if (p.replicas > 1)
        p.topology = mirrored ? engine::switchTopology(p.replicas, host.shared_memory)
                              : engine::ringTopology(p.replicas, host.loopback);
    p.replica_memory_bytes = p.spec.memory_bytes / p.replicas;
    p.device_count = 1;  // one host, whatever its replicas
    p.devices = p.spec.id + ":" + std::to_string(perReplica) + (p.replicas > 1 ? "x" + std::to_string(p.replicas) : "");
}

}  // namespace

HostCalibrator storeCalibrator(const std::string& storePath) {
    return [storePath](const engine::DeviceSpec& entry, int threads, int replicas) {
        const profiler::MachineRoofs roofs = profiler::roofsFor(storePath, threads);
        const profiler::HostModel model = profiler::hostModelFor(storePath, threads, replicas);
        HostCalibration c;
        c.spec = entry.withCalibration(roofs.peak_gflops, roofs.bandwidth_gbs,
                                       static_cast<double>(profiler::hostMemoryBytes()), model.kernels);
        c.shared_memory = model.shared_memory;
        c.loopback = model.loopback;
        return c;
    };
}

DevicePlan planDevices(const Experiment& x, const HostCalibrator& calibrate, int jobWorkers, int jobServers) {
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
    if (spec->needs_calibration) {
        planHost(p, x, calibrate, jobWorkers);
        return p;
    }
    p.replica_memory_bytes = spec->replicaMemoryBytes();
    if (x.strategy.type == engine::StrategyKind::TpuPod) {
        planTpuPod(p, x, *spec);
        return p;
    }
    if (x.strategy.type == engine::StrategyKind::Pipeline) {
        if (spec->kind != engine::DeviceKind::Gpu)
            throw std::invalid_argument("device.type: '" + spec->id + "': an emulated pipeline puts its stages on GPUs "
                                        "joined by NVLink or PCIe; TPUs train with strategy.type 'tpu_pod'");
        // One replica of the model, its stages each on a GPU of its own; neighbours send over the GPUs' link.
        p.replicas = 1;
        p.device_count = x.strategy.stages;
        p.pipeline_link = gpuLink(*spec);
        p.devices = spec->id + ":" + std::to_string(x.strategy.stages);
        return p;
    }
    if (engine::isMultiProcess(x.strategy.type)) {
        if (spec->kind == engine::DeviceKind::Tpu)
            throw std::invalid_argument("device.type: '" + spec->id + "' is a TPU, and TPUs train with strategy.type "
                                        "'tpu_pod' (a slice), not '" +
                                        std::string(engine::strategyKindName(x.strategy.type)) + "'");
        // One device per worker, each on a host of its own: the hosts' network joins them.
        const int workers = jobWorkers > 0 ? jobWorkers : x.strategy.replicas;
        p.replicas = workers;
        p.device_count = workers;
        p.network = hostNetwork(x);
        if (x.strategy.type == engine::StrategyKind::ParameterServer) {
            p.parameter_servers = jobServers > 0 ? jobServers : x.strategy.parameter_servers;
            p.ps_memory_bytes_per_s = x.device.ps_memory_gbs * 1e9;
        } else if (workers > 1) {
            // Across hosts Gloo and NCCL all-reduce on a ring: each host sends to the next over its link.
            p.topology = engine::ringTopology(workers, *p.network);
        }
        p.devices = spec->id + ":" + std::to_string(workers);
        return p;
    }
    p.replicas = x.strategy.type == engine::StrategyKind::Mirrored ? x.strategy.replicas : 1;
    if (p.replicas > 1) p.topology = gpuTopology(*spec, p.replicas);
    // A TPU used as one device: one core (v2, v3) or one chip (v4); charged a whole chip.
    p.device_count = spec->kind == engine::DeviceKind::Tpu ? 1 : p.replicas;
    p.devices = spec->id + ":" + std::to_string(p.replicas);
    return p;
}

engine::LinkParams hostNetwork(const Experiment& x) {
    return engine::LinkParams::fromBandwidth(x.device.network_latency_us * 1e-6, x.device.network_gbps * 1e9 / 8.0);
}

int64_t DevicePlan::replicaBatch(int64_t stepBatch) const {
    return parameter_servers > 0 ? stepBatch : engine::replicaBatch(stepBatch, replicas);
}

engine::VirtualClockConfig virtualClockConfig(const DevicePlan& plan, const Experiment& x, double infeed) {
    engine::VirtualClockConfig c;
    c.device = plan.spec;
    c.precision = plan.precision;
    c.replicas = plan.replicas;
    c.topology = plan.topology;
    c.bucket_bytes = x.strategy.bucket_mb * 1024.0 * 1024.0;
    c.overlap = x.strategy.overlap && !plan.exchange_takes_cores;
    c.infeed_seconds_per_batch = infeed;
    c.infeed_prefetch = x.data.pipeline.prefetch > 0;  // in-memory (IDX) and streaming pipelines alike
    if (plan.pipeline_link)
        c.pipeline = engine::PipelineLayout{x.strategy.stages,         x.strategy.micro_batches, x.strategy.schedule,
                                            x.strategy.stage_boundaries, x.strategy.recompute,     *plan.pipeline_link};
    return c;
}

engine::ParameterServerClockConfig parameterServerClockConfig(const DevicePlan& plan, const Experiment& x,
                                                              double infeed) {
    if (!plan.network || plan.parameter_servers < 1)
        throw std::logic_error("parameterServerClockConfig: the plan is not an emulated parameter_server job");
    engine::ParameterServerClockConfig c;
    c.device = plan.spec;
    c.precision = plan.precision;
    c.workers = plan.replicas;
    c.servers = plan.parameter_servers;
    c.network = *plan.network;
    c.server_memory_bytes_per_s = plan.ps_memory_bytes_per_s;
    c.infeed_seconds_per_batch = infeed;
    c.infeed_prefetch = x.data.pipeline.prefetch > 0;
    return c;
}

}  // namespace trainbench::app
