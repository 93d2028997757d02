#include "engine/emulation/devicetiming.h"

#include <algorithm>

namespace trainbench::engine {

namespace {

int64_t roundUp(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// Bytes an op moves at `precision` (OpCost counts fp32 tensors): bf16 halves, int8 quarters them.
double bytesAt(const OpDesc& op, Precision precision) {
    if (op.part == StepPart::Optimizer) return op.cost.bytes;
    if (precision == Precision::Bf16) return op.cost.bytes * 0.5;
    if (precision == Precision::Int8) return op.cost.bytes * 0.25;
    return op.cost.bytes;
}

double matrixFlops(const MatrixShape& s) {
    return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

}  // namespace

MatrixShape paddedShape(const MatrixShape& shape, const DeviceSpec& device) {
    if (!device.tpu || shape.empty()) return shape;
    const int64_t size = device.tpu->mxu_size;
    // Batch (rows) to a multiple of 8, the sublanes of the 8 x 128 vector registers; feature
    // dimensions to the MXU's side.
    return {roundUp(shape.m, 8), roundUp(shape.n, size), roundUp(shape.k, size)};
}

OpTiming opTime(const OpDesc& op, const DeviceSpec& device, Precision precision, double parameterBytes) {
    // Rates first: they throw for a precision the device lacks, whatever the op.
    const double matrixRate = device.replicaMatrixFlops(precision);
    const double vectorRate = device.replicaVectorFlops();
    OpTiming t;
    t.useful_flops = op.cost.flops;
    t.bytes = bytesAt(op, precision);
    double rest = op.cost.flops;  // FLOPs charged to the vector / fp32 rate
    if (!op.matrix.empty()) {
        const double useful = matrixFlops(op.matrix);
        const double padded = matrixFlops(paddedShape(op.matrix, device));
        t.matrix_unit = true;
        t.matrix_utilisation = useful / padded;
        // What the op does besides the product (bias, ReLU post-ops) goes to the vector unit.
        rest = std::max(0.0, op.cost.flops - useful);
        t.issued_flops = padded + rest;
        t.compute_s = padded / matrixRate + rest / vectorRate;
    } else {
        t.issued_flops = rest;
        t.compute_s = rest / vectorRate;
    }
    if (device.kernel_rates) {
        // The calibrated host: its kernels' fitted rates, arithmetic and traffic not overlapped.
        const KernelRates& rates = *device.kernel_rates;
        const KernelRate& rate = rates.rateFor(op.cost.kind, !op.matrix.empty());
        t.compute_s = op.cost.flops * rate.seconds_per_flop;
        const double factor = touchesParameters(op) ? rates.byteFactor(parameterBytes) : 1.0;
        t.memory_s = t.bytes * factor * rate.seconds_per_byte;
        t.seconds = rate.overhead_s + t.compute_s + t.memory_s;
        return t;
    }
    t.memory_s = t.bytes / device.replicaBandwidthBytesPerS();
    t.seconds = std::max(t.compute_s, t.memory_s) + device.per_op_overhead_s;
    return t;
}

StepTiming stepTime(const OpGraph& graph, const DeviceSpec& device, Precision precision) {
    StepTiming step;
    double weightedUtilisation = 0.0;
    step.ops.reserve(graph.ops.size());
    const double parameterBytes = graph.params_bytes + graph.grads_bytes + graph.optimizer_bytes;
    for (const OpDesc& op : graph.ops) {
        const OpTiming t = opTime(op, device, precision, parameterBytes);
        const double seconds = t.seconds * static_cast<double>(op.calls);
        switch (op.part) {
            case StepPart::Forward: step.forward_s += seconds; break;
            case StepPart::Backward: step.backward_s += seconds; break;
            case StepPart::Optimizer: step.optimizer_s += seconds; break;
        }
        (t.memoryBound() ? step.memory_bound_s : step.compute_bound_s) += seconds;
        if (t.matrix_unit) {
            step.matrix_s += seconds;
            weightedUtilisation += t.matrix_utilisation * seconds;
        }
        step.ops.push_back(t);
    }
    step.overhead_s = device.per_step_overhead_s;
    // The calibrated host: what its steps spend outside the graph's ops, measured with the kernels.
    if (device.kernel_rates) step.overhead_s += device.kernel_rates->stepOverhead(graph.activation_bytes);
    step.seconds = step.forward_s + step.backward_s + step.optimizer_s + step.overhead_s;
    step.matrix_utilisation = step.matrix_s > 0.0 ? weightedUtilisation / step.matrix_s : 0.0;
    return step;
}

}  // namespace trainbench::engine
