#include "engine/emulation/devicememory.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace trainbench::engine {

namespace {

struct Unit {
    double bytes;
    const char* name;
};

// The breakdown is in one unit, the one of its largest part, as device tools print it.
Unit unitFor(double bytes) {
    if (bytes >= 1024.0 * 1024.0 * 1024.0) return {1024.0 * 1024.0 * 1024.0, "GiB"};
    if (bytes >= 1024.0 * 1024.0) return {1024.0 * 1024.0, "MiB"};
    return {1024.0, "KiB"};
}

// About three significant digits: 0.10, 2.50, 17.8, 128.
std::string number(double bytes, Unit unit) {
    const double v = bytes / unit.bytes;
    char text[32];
    std::snprintf(text, sizeof text, v >= 100.0 ? "%.0f" : v >= 10.0 ? "%.1f" : "%.2f", v);
    return text;
}

std::string breakdown(const MemoryCheck& c) {
    const Unit u = unitFor(std::max({c.params_bytes, c.grads_bytes, c.optimizer_bytes, c.activation_bytes}));
    return "parameters " + number(c.params_bytes, u) + ", gradients " + number(c.grads_bytes, u) +
           ", optimizer state " + number(c.optimizer_bytes, u) + ", activations " + number(c.activation_bytes, u) +
           " " + u.name;
}

}  // namespace

MemoryCheck checkMemory(const OpGraph& graph, const DeviceSpec& device, Precision precision) {
    if (device.needs_calibration)
        throw std::invalid_argument(device.id +
                                    " has no memory size until the host is calibrated (DeviceSpec::withCalibration)");
    MemoryCheck c;
    c.params_bytes = graph.params_bytes;
    c.grads_bytes = graph.grads_bytes;
    c.optimizer_bytes = graph.optimizer_bytes;
    c.activation_bytes = precision == Precision::Bf16 ? graph.activation_bytes * 0.5 : graph.activation_bytes;
    c.needed_bytes = c.params_bytes + c.grads_bytes + c.optimizer_bytes + c.activation_bytes;
    c.capacity_bytes = device.replicaMemoryBytes();
    c.fraction = c.needed_bytes / c.capacity_bytes;
    c.fits = c.needed_bytes <= c.capacity_bytes;
    c.near_capacity = c.fits && c.fraction >= kNearCapacity;
    // Needs and capacity in the capacity's unit, so "18.2 GiB of 16.0 GiB" compares at a glance.
    const Unit cap = unitFor(c.capacity_bytes);
    const std::string amounts = number(c.needed_bytes, cap) + " " + cap.name + " of " + number(c.capacity_bytes, cap) +
                                " " + cap.name + " " + device.memoryName();
    if (!c.fits) {
        c.message = "out of memory on " + device.replicaLabel() + ": needs " + amounts + " \u2014 " + breakdown(c);
    } else if (c.near_capacity) {
        char percent[16];
        std::snprintf(percent, sizeof percent, "%.0f %%", c.fraction * 100.0);
        c.message = "near capacity on " + device.replicaLabel() + ": " + amounts + " (" + percent + ") \u2014 " +
                    breakdown(c) + "; memory-bound (capacity)";
    }
    return c;
}

}  // namespace trainbench::engine
