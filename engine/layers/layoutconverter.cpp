#include "engine/layers/layoutconverter.h"

#include "engine/layers/opcosts.h"

namespace trainbench::engine {

void LayoutConverter::prepare(const dnnl::memory::desc& from, const dnnl::memory::desc& to, CpuDevice& device) {
    if (reorder_ && from == from_ && to == to_) return;
    from_ = from;
    to_ = to;
    reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(device.engine(), from, device.engine(), to));
    op_ = device.ops().add(opcost::reorder(from.dims(), static_cast<int64_t>(from.get_size()),
                                           static_cast<int64_t>(to.get_size())));
}

Tensor& LayoutConverter::convert(Tensor& src, const dnnl::memory::desc& want, CpuDevice& device) {
    if (src.desc() == want) return src;
    if (buffer_.empty() || !(buffer_.desc() == want)) buffer_ = Tensor(want, device.engine());
    prepare(src.desc(), want, device);
    prof::OpTimer timer(op_);
    reorder_.execute(device.stream(), src.mem(), buffer_.mem());
    return buffer_;
}

void LayoutConverter::convertInto(const Tensor& src, Tensor& dst, CpuDevice& device) {
    prepare(src.desc(), dst.desc(), device);
    prof::OpTimer timer(op_);
    reorder_.execute(device.stream(), const_cast<dnnl::memory&>(src.mem()), dst.mem());
}

}  // namespace trainbench::engine
