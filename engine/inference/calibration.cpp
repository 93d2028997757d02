#include "engine/inference/calibration.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/graph/graphpasses.h"
#include "engine/graph/referenceevaluator.h"

namespace trainbench::engine::inference {

using graph::OpKind;

int u8Levels() {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::avx512_core_vnni:
        case dnnl::cpu_isa::avx512_core_bf16:
        case dnnl::cpu_isa::avx512_core_amx:
        case dnnl::cpu_isa::avx2_vnni: return 255;
        default: return 127;
    }
}

std::string effectiveIsa() {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::sse41: return "sse41";
        case dnnl::cpu_isa::avx: return "avx";
        case dnnl::cpu_isa::avx2: return "avx2";
        case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
        case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
        case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
        case dnnl::cpu_isa::avx512_core: return "avx512_core";
        case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
        case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
        case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
        default: return "unknown";
    }
}

namespace {

// The range of each value: min and max, or the percentile of |x| (sorted samples).
struct Observed {
    double lo = 0.0, hi = 0.0;
    std::vector<float> magnitudes;  // percentile only
};

}  // namespace

QuantizedGraph quantizeGraph(const graph::Graph& source, const float* x, int64_t available, const CalibrationOptions& o) {
    if (o.batches < 1 || o.batch_size < 1)
        throw std::invalid_argument("calibration needs at least one batch of at least one example");
    const int64_t examples = o.batches * o.batch_size;
    if (examples > available)
        throw std::invalid_argument("calibration asks for " + std::to_string(o.batches) + " batches of " +
                                    std::to_string(o.batch_size) + " examples; the data holds " + std::to_string(available));
    if (o.method != "minmax" && o.method != "percentile")
        throw std::invalid_argument("calibration method '" + o.method + "': expected minmax or percentile");
    QuantizedGraph q;
    q.graph = graph::optimizeForInference(source);
    q.graph.validate();
    checkInt8Ops(q.graph);
    if (q.graph.metadata.input_shift != 0.0f)
        throw graph::GraphError("input '" + q.graph.input + "': int8 takes no input shift (the graph's is " +
                                std::to_string(q.graph.metadata.input_shift) + ")");
    std::map<std::string, Observed> seen;
    const bool percentile = o.method == "percentile";
    graph::observeReference(q.graph, x, examples, [&](const std::string& value, const std::vector<double>& v) {
        Observed& s = seen[value];
        for (double d : v) {
            s.lo = std::min(s.lo, d);
            s.hi = std::max(s.hi, d);
            if (percentile) s.magnitudes.push_back(static_cast<float>(std::abs(d)));
        }
    });
    const int levels = o.u8_levels > 0 ? o.u8_levels : u8Levels();
    std::map<std::string, ActivationQuant> calibrated;
    for (auto& [value, s] : seen) {
        double range = std::max(-s.lo, s.hi);
        if (percentile && !s.magnitudes.empty()) {
            const size_t at = std::min(s.magnitudes.size() - 1,
                                       static_cast<size_t>(o.percentile / 100.0 * double(s.magnitudes.size())));
            std::nth_element(s.magnitudes.begin(), s.magnitudes.begin() + static_cast<long>(at), s.magnitudes.end());
            range = s.magnitudes[at];
        }
        ActivationQuant a;
        a.is_unsigned = s.lo >= 0.0;
        a.levels = a.is_unsigned ? levels : 127;
        a.scale = range > 0.0 ? static_cast<float>(range / a.levels) : 1.0f;
        calibrated[value] = a;
    }
    // Recorded as int8 runs them, so that the record (and the model's file, engine/onnx/onnxquantized.h)
    // says what runs: a range calibrated for a value held in another's codes, or in fp32, is left out.
    for (const auto& [value, from] : activationSources(q.graph)) q.activations[value] = calibrated.at(from);
    for (const graph::Node& n : q.graph.nodes) {
        if (n.kind != OpKind::Conv && n.kind != OpKind::Gemm) continue;
        graph::Initializer& w = q.graph.initializers.at(n.inputs[1]);
        q.weights[n.inputs[1]] = quantizeWeight(w);
        w.values.clear();
        w.values.shrink_to_fit();
    }
    q.calibration = {o.batches, o.batch_size, examples, o.method, percentile ? o.percentile : 100.0, o.seed, levels};
    return q;
}

}  // namespace trainbench::engine::inference
