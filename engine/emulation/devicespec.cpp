#include "engine/emulation/devicespec.h"

#include <stdexcept>
#include <utility>

namespace trainbench::engine {

const char* deviceKindName(DeviceKind kind) {
    switch (kind) {
        case DeviceKind::Cpu: return "cpu";
        case DeviceKind::Gpu: return "gpu";
        case DeviceKind::Tpu: return "tpu";
        case DeviceKind::Npu: return "npu";
    }
    return "?";
}

const char* precisionName(Precision precision) {
    switch (precision) {
        case Precision::Fp32: return "fp32";
        case Precision::Tf32: return "tf32";
        case Precision::Bf16: return "bf16";
        case Precision::Int8: return "int8";
    }
    return "?";
}

Precision parsePrecision(const std::string& name) {
    if (name == "fp32") return Precision::Fp32;
    if (name == "tf32") return Precision::Tf32;
    if (name == "bf16") return Precision::Bf16;
    throw std::invalid_argument("unknown precision '" + name + "'; must be one of 'fp32', 'tf32', 'bf16'");
}

Precision parseInferencePrecision(const std::string& name) {
    if (name == "fp32") return Precision::Fp32;
    if (name == "bf16") return Precision::Bf16;
    if (name == "int8") return Precision::Int8;
    throw std::invalid_argument("unknown inference precision '" + name + "'; must be one of 'fp32', 'bf16', 'int8'");
}

const char* figureStatusName(FigureSource::Status status) {
    switch (status) {
        case FigureSource::Status::Published: return "published";
        case FigureSource::Status::Derived: return "derived";
        case FigureSource::Status::Assumed: return "assumed";
    }
    return "?";
}

int DeviceSpec::replicasPerDevice() const { return tpu && !tpu->replica_is_chip ? tpu->tensorcores_per_chip : 1; }

int DeviceSpec::replicaMxus() const {
    if (!tpu) return 0;
    return tpu->replica_is_chip ? tpu->mxus_per_tensorcore * tpu->tensorcores_per_chip : tpu->mxus_per_tensorcore;
}

double DeviceSpec::replicaMxuFlops() const {
    if (!tpu) return 0.0;
    const double size = tpu->mxu_size;
    return replicaMxus() * size * size * 2.0 * tpu->clock_hz;
}

double DeviceSpec::replicaMatrixFlops(Precision precision) const {
    if (needs_calibration)
        throw std::invalid_argument(id +
                                    " has no peak FLOP/s until the host is calibrated (DeviceSpec::withCalibration)");
    if (kind == DeviceKind::Npu && precision != Precision::Int8)
        throw std::invalid_argument(id + " runs int8 only: quantize the model (trainbench-cli quantize)");
    if (tpu && (precision == Precision::Fp32 || precision == Precision::Bf16)) return replicaMxuFlops();
    const std::optional<double> rate = precision == Precision::Fp32   ? std::optional<double>(peak_fp32_flops)
                                       : precision == Precision::Tf32 ? peak_tf32_flops
                                       : precision == Precision::Bf16 ? peak_bf16_flops
                                                                      : peak_int8_ops;
    if (!rate) {
        std::string why = std::string(id) + " has no " + precisionName(precision) + " matrix rate";
        if (tpu) why += " (the MXU multiplies bf16; use fp32 or bf16)";
        throw std::invalid_argument(why);
    }
    return *rate / replicasPerDevice();
}

std::string DeviceSpec::replicaLabel() const {
    if (!tpu) return id;
    return id + (tpu->replica_is_chip ? " chip" : " core");
}

DeviceSpec DeviceSpec::withOwnershipCost(std::optional<double> service_life_years,
                                         std::optional<double> usd_per_kwh) const {
    if (!ownership)
        throw std::invalid_argument(id + " is rented at $" + std::to_string(price_per_hour) +
                                    " per " + price_unit + ": a service life or electricity price applies only to a "
                                    "bought device");
    if (service_life_years && !(*service_life_years > 0.0))
        throw std::invalid_argument(id + ": a service life must be positive, got " +
                                    std::to_string(*service_life_years) + " years");
    if (usd_per_kwh && !(*usd_per_kwh >= 0.0))
        throw std::invalid_argument(id + ": an electricity price must be >= 0, got " + std::to_string(*usd_per_kwh) +
                                    " USD per kWh");
    DeviceSpec out = *this;
    if (service_life_years) out.ownership->service_life_years = *service_life_years;
    if (usd_per_kwh) out.ownership->usd_per_kwh = *usd_per_kwh;
    out.price_per_hour = out.ownership->usdPerHour();
    return out;
}

DeviceSpec DeviceSpec::withCalibration(double peak_gflops, double bandwidth_gbs, double host_memory_bytes) const {
    if (!needs_calibration)
        throw std::invalid_argument(
            id + " has fixed figures in the catalog; only a calibrated device (cpu-host) takes measured ones");
    if (!(peak_gflops > 0.0) || !(bandwidth_gbs > 0.0) || !(host_memory_bytes > 0.0))
        throw std::invalid_argument(id + ": calibration figures must be positive (peak " + std::to_string(peak_gflops) +
                                    " GFLOP/s, bandwidth " + std::to_string(bandwidth_gbs) + " GB/s, memory " +
                                    std::to_string(host_memory_bytes) + " bytes)");
    DeviceSpec out = *this;
    out.peak_fp32_flops = peak_gflops * 1e9;
    out.memory_bandwidth_bytes_per_s = bandwidth_gbs * 1e9;
    out.memory_bytes = host_memory_bytes;
    out.needs_calibration = false;
    return out;
}

DeviceSpec DeviceSpec::withCalibration(double peak_gflops, double bandwidth_gbs, double host_memory_bytes,
                                       KernelRates rates) const {
    if (rates.empty()) throw std::invalid_argument(id + ": calibration without kernel rates");
    DeviceSpec out = withCalibration(peak_gflops, bandwidth_gbs, host_memory_bytes);
    out.kernel_rates = std::move(rates);
    return out;
}

}  // namespace trainbench::engine
