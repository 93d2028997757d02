#pragma once
// Moves a tensor into the memory layout a primitive wants, with a reorder primitive created once and
// reused; a no-op when the layout already matches.
#include "engine/device/cpudevice.h"
#include "engine/tensor/tensor.h"

namespace trainbench::engine {

class LayoutConverter {
public:
    // Returns `src` itself when it already has layout `want`, otherwise the converted copy.
    Tensor& convert(Tensor& src, const dnnl::memory::desc& want, CpuDevice& device);
    // Reorders src into an existing destination (e.g. a slice of the gradient buffer).
    void convertInto(const Tensor& src, Tensor& dst, CpuDevice& device);

private:
    void prepare(const dnnl::memory::desc& from, const dnnl::memory::desc& to, CpuDevice& device);

    dnnl::memory::desc from_, to_;
    dnnl::reorder reorder_;
    Tensor buffer_;
    prof::OpStat* op_ = nullptr;  // per-op statistics of the reorder
};

}  // namespace trainbench::engine
