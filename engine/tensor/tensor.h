#pragma once
// A fp32 tensor: a 64-byte aligned buffer described by a oneDNN memory descriptor. The layout may be
// plain (nchw, nc) or one of oneDNN's blocked layouts; layers convert at the boundaries that need plain.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace trainbench::engine {

using Dims = std::vector<int64_t>;

// Owning, zero-initialised, 64-byte aligned float storage.
class AlignedBuffer {
public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(size_t count);
    AlignedBuffer(AlignedBuffer&&) noexcept = default;
    AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;

    float* data() { return ptr_.get(); }
    const float* data() const { return ptr_.get(); }
    size_t size() const { return size_; }

private:
    struct Free { void operator()(float* p) const; };
    std::unique_ptr<float, Free> ptr_;
    size_t size_ = 0;
};

class Tensor {
public:
    Tensor() = default;
    // Allocates storage for the descriptor (which may be blocked, so padded) on the engine.
    Tensor(const dnnl::memory::desc& desc, const dnnl::engine& engine);
    // A view of someone else's storage (e.g. a slice of the model's parameter buffer).
    Tensor(const dnnl::memory::desc& desc, const dnnl::engine& engine, float* external);

    float* data() { return static_cast<float*>(mem_.get_data_handle()); }
    const float* data() const { return static_cast<const float*>(mem_.get_data_handle()); }
    const dnnl::memory::desc& desc() const { return desc_; }
    dnnl::memory& mem() { return mem_; }
    const dnnl::memory& mem() const { return mem_; }
    Dims dims() const { return desc_.dims(); }
    int64_t elements() const;          // logical element count (product of dims)
    bool empty() const { return !mem_; }
    bool isPlain() const;              // dense row-major layout (nc, nchw, ...)

    // A plain row-major descriptor of the given dims.
    static dnnl::memory::desc plainDesc(const Dims& dims);
    // Whether the batch dimension is outermost: each example's values are one block of memory and the
    // blocks follow each other, so a run of consecutive examples is a slice. True of plain layouts and
    // of oneDNN's channel-blocked activation layouts (nChw16c: [N][C/16][H][W][16]).
    static bool batchOutermost(const dnnl::memory::desc& md);
    // The layout of `batch` examples in layout md (batch outermost): the same strides, another
    // outermost extent.
    static dnnl::memory::desc withBatch(const dnnl::memory::desc& md, int64_t batch);

private:
    AlignedBuffer storage_;
    dnnl::memory::desc desc_;
    dnnl::memory mem_;
};

}  // namespace trainbench::engine
