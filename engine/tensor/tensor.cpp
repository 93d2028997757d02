#include "engine/tensor/tensor.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <numeric>

namespace trainbench::engine {

namespace {
constexpr size_t kAlignment = 64;

dnnl::memory::format_tag plainTag(size_t ndims) {
    using tag = dnnl::memory::format_tag;
    switch (ndims) {
        case 1: return tag::a;
        case 2: return tag::ab;
        case 3: return tag::abc;
        case 4: return tag::abcd;
        case 5: return tag::abcde;
        default: return tag::undef;
    }
}
}  // namespace

void AlignedBuffer::Free::operator()(float* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(size_t count) : size_(count) {
    if (count == 0) return;
    // aligned_alloc needs a size that is a multiple of the alignment.
    size_t bytes = (count * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    ptr_.reset(static_cast<float*>(p));
}

Tensor::Tensor(const dnnl::memory::desc& desc, const dnnl::engine& engine)
    : storage_(desc.get_size() / sizeof(float)), desc_(desc), mem_(desc, engine, storage_.data()) {}

Tensor::Tensor(const dnnl::memory::desc& desc, const dnnl::engine& engine, float* external)
    : desc_(desc), mem_(desc, engine, external) {}

int64_t Tensor::elements() const {
    Dims d = dims();
    return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>());
}

bool Tensor::isPlain() const { return desc_ == plainDesc(dims()); }

dnnl::memory::desc Tensor::plainDesc(const Dims& dims) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plainTag(dims.size()));
}

bool Tensor::batchOutermost(const dnnl::memory::desc& md) {
    const dnnl_memory_desc_t& d = md.data;
    if (d.format_kind != dnnl_blocked || d.offset0 != 0) return false;
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    for (int i = 0; i < b.inner_nblks; ++i)
        if (b.inner_idxs[i] == 0) return false;
    return static_cast<size_t>(b.strides[0] * d.padded_dims[0]) * sizeof(float) == md.get_size();
}

dnnl::memory::desc Tensor::withBatch(const dnnl::memory::desc& md, int64_t batch) {
    dnnl::memory::desc s = md;
    s.data.dims[0] = batch;
    s.data.padded_dims[0] = batch;
    return s;
}

}  // namespace trainbench::engine
