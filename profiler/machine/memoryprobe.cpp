#include "profiler/machine/memoryprobe.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/model/model.h"

namespace trainbench::profiler {

namespace {

constexpr double kFloatBytes = 4.0;

// The number after `key` on its line of a /proc file ("VmHWM:   123 kB", "pswpin 42"), or -1.
int64_t procValue(const char* file, std::string_view key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0) continue;
        std::istringstream rest(line.substr(key.size()));
        int64_t value = -1;
        rest >> value;
        return value;
    }
    return -1;
}

double elements(const engine::Dims& dims) {
    double count = 1.0;
    for (const int64_t d : dims) count *= static_cast<double>(d);
    return count;
}

// What one training step keeps per example, in floats. The count follows the tensors the engine
// holds, not one per layer:
//  * the input batch the forward pass reads (the trainer's buffer, kept until backward);
//  * each layer's output, except where a layer hands on its input: ReLU and Dropout work in place
//    (a ReLU fused into the layer before is that layer's post-op), and Flatten is a view of a
//    plain input;
//  * the gradient of each counted output, when backward computes it: for the last layer (the loss
//    gradient) and where the next layer needs its input gradient (none does before the first
//    layer with parameters). In-place layers update the gradient in place, too;
//  * plain copies: conv2d and maxpool2d outputs are in oneDNN's blocked layouts, and a flatten or
//    dense layer reading one reorders it into a plain copy (Flatten's output is that copy), and
//    its gradient back;
//  * Dropout's mask, one float per element.
// Not counted: oneDNN scratchpads and pooling workspaces (indices), layouts a convolution picks
// for its own input or weights, and the padding of blocked layouts.
double activationFloatsPerExample(const engine::Model& model) {
    const auto& layers = model.layers();
    auto kindOf = [&](size_t i) { return std::string_view(layers[i]->kind()); };
    auto inPlace = [&](size_t i) { return kindOf(i) == "relu" || kindOf(i) == "dropout"; };
    // Whether layer i reads a blocked tensor: the last layer before it that made a tensor of its
    // own is a convolution or a pooling (the model's input is plain).
    auto readsBlocked = [&](size_t i) {
        while (i > 0 && inPlace(i - 1)) --i;
        return i > 0 && (kindOf(i - 1) == "conv2d" || kindOf(i - 1) == "maxpool2d");
    };
    double floats = elements(model.sampleShape());
    for (size_t i = 0; i < layers.size(); ++i) {
        const engine::Layer& layer = *layers[i];
        const double output = elements(layer.outputShape());
        const bool outputGradient = i + 1 == layers.size() || layers[i + 1]->needsInputGrad();
        if (kindOf(i) == "dropout") floats += output;
        if (inPlace(i)) continue;
        if (kindOf(i) == "flatten") {
            if (readsBlocked(i)) floats += output * (outputGradient ? 2 : 1);
            continue;
        }
        if (kindOf(i) == "dense" && readsBlocked(i)) {
            floats += elements(layer.inputShape()) * (layer.needsInputGrad() ? 2 : 1);
        }
        floats += output * (outputGradient ? 2 : 1);
    }
    return floats;
}

}  // namespace

int64_t peakRssBytes() {
    const int64_t kib = procValue("/proc/self/status", "VmHWM:");
    return kib > 0 ? kib * 1024 : 0;
}

bool resetPeakRss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

int64_t hostMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0) return static_cast<int64_t>(pages) * pageSize;
    const int64_t kib = procValue("/proc/meminfo", "MemTotal:");
    return kib > 0 ? kib * 1024 : 0;
}

int64_t swapPages() {
    const int64_t in = procValue("/proc/vmstat", "pswpin ");
    const int64_t out = procValue("/proc/vmstat", "pswpout ");
    return (in > 0 ? in : 0) + (out > 0 ? out : 0);
}

int64_t majorFaults() {
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return static_cast<int64_t>(usage.ru_majflt);
}

double optimizerStateFloatsPerParam(const engine::OptimizerConfig& config) {
    if (config.kind == engine::OptimizerKind::Adam) return 2.0;
    return config.momentum > 0.0f ? 1.0 : 0.0;
}

MemoryFootprint footprintOf(const engine::Model& model, int64_t batch,
                            double optimizerStateFloatsPerParam, double deviceMemoryBytes) {
    if (batch <= 0) throw std::invalid_argument("memory footprint: batch must be positive, got " + std::to_string(batch));
    MemoryFootprint footprint;
    const double params = static_cast<double>(model.paramCount());
    footprint.params_bytes = params * kFloatBytes;
    footprint.grads_bytes = params * kFloatBytes;  // one gradient buffer, as large as the parameters
    footprint.optimizer_bytes = params * optimizerStateFloatsPerParam * kFloatBytes;
    footprint.activation_bytes =
        static_cast<double>(batch) * activationFloatsPerExample(model) * kFloatBytes;
    if (deviceMemoryBytes > 0.0) {
        footprint.device_bytes = deviceMemoryBytes;
        footprint.device_source = "device.memory_mb";
    } else {
        footprint.device_bytes = static_cast<double>(hostMemoryBytes());
        footprint.device_source = "host RAM";
    }
    return footprint;
}

}  // namespace trainbench::profiler
