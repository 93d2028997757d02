#include "engine/emulation/tpuslice.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace trainbench::engine {
namespace {

struct Shape {
    int cores;
    std::vector<int> dims;
};

// Chip grids per slice: v2/v3 from TensorFlow's host bounds (tensorflow/python/tools/
// grpc_tpu_worker.py) times 2x2 chips per host; v4 from Google's AI-Hypercomputer/maxtext
// (accelerator_to_spec_map.py). See docs/collectives-model.md.
const std::vector<Shape>& shapes(int generation) {
    static const std::vector<Shape> v2 = {{8, {2, 2}}, {32, {4, 4}}, {128, {8, 8}}, {256, {8, 16}}, {512, {16, 16}}};
    static const std::vector<Shape> v3 = {{8, {2, 2}},     {32, {4, 4}},     {64, {4, 8}},      {128, {8, 8}},
                                          {256, {8, 16}},  {512, {16, 16}},  {1024, {16, 32}},  {2048, {32, 32}}};
    static const std::vector<Shape> v4 = {{8, {2, 2, 1}},     {16, {2, 2, 2}},     {32, {2, 2, 4}},    {64, {2, 4, 4}},
                                          {128, {4, 4, 4}},   {256, {4, 4, 8}},    {384, {4, 4, 12}},  {512, {4, 8, 8}},
                                          {1024, {8, 8, 8}},  {1536, {8, 8, 12}},  {2048, {8, 8, 16}}, {4096, {8, 16, 16}}};
    static const std::vector<Shape> none;
    switch (generation) {
    case 2: return v2;
    case 3: return v3;
    case 4: return v4;
    default: return none;
    }
}

// v2 and v3 pods are 2D tori of 16x16 and 32x32 chips. A slice keeps the wrap link of a dimension
// only where it spans the pod's whole extent (an assumption, see the doc). v4 slices made of whole
// 4x4x4 cubes are wired as a 3D torus through the optical switches; smaller ones are a mesh.
std::vector<bool> wrapOf(int generation, const std::vector<int>& dims) {
    std::vector<bool> wrap(dims.size(), false);
    if (generation == 4) {
        const bool cubes = std::all_of(dims.begin(), dims.end(), [](int d) { return d % 4 == 0; });
        std::fill(wrap.begin(), wrap.end(), cubes);
    } else {
        const int podExtent = generation == 2 ? 16 : 32;
        for (size_t i = 0; i < dims.size(); ++i) wrap[i] = dims[i] == podExtent;
    }
    return wrap;
}

std::string validSizes(int generation) {
    const std::vector<Shape>& s = shapes(generation);
    std::string out = "v" + std::to_string(generation) + " slices have ";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i > 0) out += i + 1 == s.size() ? " or " : ", ";
        out += std::to_string(s[i].cores);
    }
    return out + " TensorCores";
}

bool allDigits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

TpuSlice parseTpuSlice(const std::string& name) {
    const std::string where = "TPU slice '" + name + "'";
    const size_t dash = name.find('-');
    if (name.size() < 4 || name[0] != 'v' || dash == std::string::npos || !allDigits(name.substr(1, dash - 1)) ||
        !allDigits(name.substr(dash + 1)))
        throw std::invalid_argument(where + ": expected v<generation>-<TensorCores>, e.g. v3-32 (v2-8 ... v2-512, "
                                            "v3-8 ... v3-2048, v4-8 ... v4-4096)");
    const std::string gen = name.substr(1, dash - 1);
    const int generation = gen.size() == 1 ? gen[0] - '0' : 0;
    if (shapes(generation).empty())
        throw std::invalid_argument(where + ": TPU v" + gen + " is not modelled; the generations are v2, v3 and v4");
    const std::string count = name.substr(dash + 1);
    for (const Shape& s : shapes(generation)) {
        if (std::to_string(s.cores) != count) continue;
        TpuSlice slice;
        slice.name = name;
        slice.generation = generation;
        slice.cores = s.cores;
        slice.dims = s.dims;
        slice.wrap = wrapOf(generation, s.dims);
        return slice;
    }
    throw std::invalid_argument(where + ": no such slice; " + validSizes(generation));
}

std::vector<std::string> tpuSliceNames(int generation) {
    std::vector<std::string> names;
    for (const Shape& s : shapes(generation)) names.push_back("v" + std::to_string(generation) + "-" + std::to_string(s.cores));
    return names;
}

Topology sliceTopology(const TpuSlice& slice, LinkParams ici, LinkParams on_chip) {
    return withOnChip(torusTopology(slice.dims, slice.wrap, ici), slice.cores_per_chip, on_chip);
}

}  // namespace trainbench::engine
