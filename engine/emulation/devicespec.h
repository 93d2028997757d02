#pragma once
// One device of the catalog (resources/devices.json) in SI units: what an emulated device's cost
// model charges time and money from. GPU figures are per GPU, TPU figures per chip; the replica*()
// accessors give what one replica runs on (a TensorCore of a v2/v3 chip, a whole v4 chip).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/emulation/kernelrates.h"
#include "engine/emulation/ownershipcost.h"

namespace trainbench::engine {

// Npu: an inference accelerator that computes int8 only and holds the parameters in on-chip memory
// (a Coral Edge TPU); it streams what does not fit from the host over its link.
enum class DeviceKind { Cpu, Gpu, Tpu, Npu };
const char* deviceKindName(DeviceKind kind);

// The numeric format an emulated run computes in. On TPUs the MXU always multiplies bf16 and
// accumulates fp32 (XLA's default precision rounds fp32 matrix inputs to bf16), so Fp32 and Bf16
// differ there only in the bytes moved; TPUs and V100 have no TF32. Int8 is for inference only
// (quantized weights and activations, int32 accumulation): training never runs in it.
enum class Precision { Fp32, Tf32, Bf16, Int8 };
const char* precisionName(Precision precision);
// A training precision: "fp32", "tf32", "bf16"; std::invalid_argument naming the accepted values otherwise.
Precision parsePrecision(const std::string& name);
// An inference precision: "fp32", "bf16", "int8"; std::invalid_argument naming the accepted values otherwise.
Precision parseInferencePrecision(const std::string& name);

// Where a figure comes from: a publication, a derivation from published figures, or an assumption.
struct FigureSource {
    enum class Status { Published, Derived, Assumed };
    Status status = Status::Published;
    std::string ref;  // the publication, or how the figure was derived / why it was assumed
};
const char* figureStatusName(FigureSource::Status status);

enum class TorusTopology { Torus2D, Torus3D };

// A TPU chip's matrix units and its inter-chip interconnect (ICI).
struct TpuSpec {
    int tensorcores_per_chip = 0;
    int mxus_per_tensorcore = 0;
    int mxu_size = 0;  // an MXU is mxu_size x mxu_size multiply-accumulators (128)
    double clock_hz = 0.0;
    bool replica_is_chip = false;  // v4 megacore: one replica per chip; v2/v3: one per TensorCore
    int ici_links_per_chip = 0;
    double ici_link_bytes_per_s = 0.0;
    double ici_latency_s = 0.0;
    TorusTopology topology = TorusTopology::Torus2D;
    int pod_chips = 0;
    std::vector<std::string> slices;  // accelerator types offered, e.g. "v3-8" ... "v3-2048"
};

// An inference accelerator's link to its host (USB, PCIe), over which parameters that do not fit in
// its on-chip memory are streamed on every invocation.
struct NpuSpec {
    double host_link_bytes_per_s = 0.0;
};

// A GPU's links to its peers and to the host.
struct GpuLinks {
    double nvlink_bytes_per_s = 0.0;  // all links, bidirectional, as datasheets give it
    double pcie_bytes_per_s = 0.0;
    double latency_s = 0.0;
};

struct DeviceSpec {
    std::string id;
    DeviceKind kind = DeviceKind::Cpu;
    std::string name;

    // Rates of the whole device, FLOP/s. peak_fp32 is the non-matrix rate too (GPU CUDA cores, TPU
    // vector units). No value: the device has no such mode.
    double peak_fp32_flops = 0.0;
    std::optional<double> peak_tf32_flops;
    std::optional<double> peak_bf16_flops;  // tensor cores / MXUs at 16 bits (fp16 on V100)
    std::optional<double> peak_int8_ops;    // int8 tensor cores / MXUs, dense, op/s (inference)
    double memory_bytes = 0.0;
    double memory_bandwidth_bytes_per_s = 0.0;
    double per_op_overhead_s = 0.0;
    double per_step_overhead_s = 0.0;

    double price_per_hour = 0.0;  // USD per device-hour: per GPU, per TPU chip, per host
    std::string price_unit;       // "gpu-hour", "chip-hour", "host-hour"; "device" when bought
    // A bought device: price_per_hour is ownership->usdPerHour() (withOwnershipCost() changes it).
    std::optional<OwnershipCost> ownership;
    std::string price_provider, price_region, price_date;

    // cpu-host: peak, bandwidth and memory are this host's, from the profiler's calibration; zero
    // until withCalibration() fills them.
    bool needs_calibration = false;
    // cpu-host, calibrated: how long this host's kernels take, fitted to probe measurements. When
    // present an op is timed by these rates instead of the roofline (devicetiming.h).
    std::optional<KernelRates> kernel_rates;

    std::optional<TpuSpec> tpu;
    std::optional<GpuLinks> links;
    std::optional<NpuSpec> npu;
    // Keyed by the figure's key path in the device entry, e.g. "memory.bandwidth_gbs".
    std::map<std::string, FigureSource> sources;

    // Replicas one device holds: 2 on a v2/v3 chip (one per TensorCore), otherwise 1.
    int replicasPerDevice() const;
    double replicaMemoryBytes() const { return memory_bytes / replicasPerDevice(); }
    double replicaBandwidthBytesPerS() const { return memory_bandwidth_bytes_per_s / replicasPerDevice(); }
    // The rate non-matrix ops are charged: fp32, or int8 on an accelerator that computes nothing else.
    double replicaVectorFlops() const {
        return (kind == DeviceKind::Npu ? peak_int8_ops.value_or(0.0) : peak_fp32_flops) / replicasPerDevice();
    }
    double replicaPricePerHour() const { return price_per_hour / replicasPerDevice(); }
    // MXUs a replica drives (TPUs only): per TensorCore, or the whole chip for v4's megacore.
    int replicaMxus() const;
    // A TPU replica's matrix rate: MXUs x size^2 x 2 x clock, FLOP/s.
    double replicaMxuFlops() const;
    // The matrix-product rate of one replica at `precision`; std::invalid_argument naming the
    // device when it has no such mode (TF32 on V100 or a TPU, anything but int8 on an Npu) or is an
    // uncalibrated cpu-host.
    double replicaMatrixFlops(Precision precision) const;
    // "tpu-v3 core", "tpu-v4 chip", "a100-sxm4-40gb": what one replica is, for messages.
    std::string replicaLabel() const;
    const char* memoryName() const {
        return kind == DeviceKind::Cpu ? "RAM" : kind == DeviceKind::Npu ? "on-chip memory" : "HBM";
    }

    // A bought device priced with another service life or electricity price (an absent one is kept). std::invalid_argument naming the device if it is rented
    // (it has an hourly price) or a figure is not positive (the price may be 0).
    DeviceSpec withOwnershipCost(std::optional<double> service_life_years, std::optional<double> usd_per_kwh) const;

    // A copy with this host's measured figures (profiler calibration: GFLOP/s of a large fp32
    // matmul, STREAM-triad GB/s; RAM in bytes). std::invalid_argument if this device takes no
    // calibration or a figure is not positive.
    DeviceSpec withCalibration(double peak_gflops, double bandwidth_gbs, double memory_bytes) const;
    // The same with the host's fitted kernel rates (they must not be empty).
    DeviceSpec withCalibration(double peak_gflops, double bandwidth_gbs, double memory_bytes,
                               KernelRates rates) const;
};

}  // namespace trainbench::engine
