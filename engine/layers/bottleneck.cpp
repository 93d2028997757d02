#include "engine/layers/bottleneck.h"

#include <sstream>

#include "engine/layers/batchnorm.h"
#include "engine/layers/conv2d.h"
#include "engine/layers/opcosts.h"
#include "engine/util/errors.h"

namespace trainbench::engine {

using dnnl::memory;

namespace {
constexpr const char* kMainNames[] = {"conv_a", "bn_a", "conv_b", "bn_b", "conv_c", "bn_c"};
constexpr const char* kShortcutNames[] = {"conv_shortcut", "bn_shortcut"};
}  // namespace

Bottleneck::Bottleneck(CpuDevice& device, Dims sampleShape, int64_t width, int64_t stride, float momentum,
                       float epsilon)
    : Layer(device, std::move(sampleShape)), width_(width), stride_(stride) {
    if (in_.size() != 3)
        throw ModelError("bottleneck needs an input of shape [channels, height, width], got rank " +
                         std::to_string(in_.size()));
    if (width_ <= 0 || stride_ <= 0)
        throw ModelError("bottleneck width and stride must be positive, got " + std::to_string(width_) + " and " +
                         std::to_string(stride_));
    auto add = [&](std::vector<std::unique_ptr<Layer>>& branch, std::unique_ptr<Layer> l) -> Layer& {
        branch.push_back(std::move(l));
        return *branch.back();
    };
    auto convBn = [&](std::vector<std::unique_ptr<Layer>>& branch, const Dims& in, int64_t filters, int64_t kernel,
                      int64_t s, int64_t pad) -> Layer& {
        Layer& conv = add(branch, std::make_unique<Conv2D>(device, in, filters, kernel, s, pad, /*bias=*/false));
        return add(branch, std::make_unique<BatchNorm>(device, conv.outputShape(), momentum, epsilon));
    };
    Layer& a = convBn(main_, in_, width_, 1, 1, 0);
    a.fuseReLU();
    Layer& b = convBn(main_, a.outputShape(), width_, 3, stride_, 1);
    b.fuseReLU();
    Layer& c = convBn(main_, b.outputShape(), 4 * width_, 1, 1, 0);
    out_ = c.outputShape();
    if (stride_ != 1 || in_[0] != 4 * width_) convBn(shortcut_, in_, 4 * width_, 1, stride_, 0);
}

std::string Bottleneck::describe() const {
    std::ostringstream s;
    s << "Bottleneck(" << in_[0] << " -> " << 4 * width_ << ", width " << width_ << ", stride " << stride_ << ", "
      << (projection() ? "projection" : "identity") << " shortcut)";
    return s.str();
}

std::vector<Layer*> Bottleneck::parts() const {
    std::vector<Layer*> out;
    for (const auto& l : main_) out.push_back(l.get());
    for (const auto& l : shortcut_) out.push_back(l.get());
    return out;
}

int64_t Bottleneck::paramCount() const {
    int64_t n = 0;
    for (Layer* l : parts()) n += l->paramCount();
    return n;
}

int64_t Bottleneck::stateCount() const {
    int64_t n = 0;
    for (Layer* l : parts()) n += l->stateCount();
    return n;
}

void Bottleneck::bindParams(float* params, float* grads) {
    for (Layer* l : parts()) {
        l->bindParams(params, grads);
        params += l->paramCount();
        grads += l->paramCount();
    }
}

void Bottleneck::initParams(Rng& rng) {
    for (Layer* l : parts()) l->initParams(rng);
}

void Bottleneck::bindState(float* state) {
    for (Layer* l : parts()) {
        l->bindState(state);
        state += l->stateCount();
    }
}

void Bottleneck::setNeedsInputGrad(bool needs) {
    Layer::setNeedsInputGrad(needs);
    // Only the layers reading the block's input can skip their input gradient.
    main_.front()->setNeedsInputGrad(needs);
    if (projection()) shortcut_.front()->setNeedsInputGrad(needs);
}

void Bottleneck::setStatisticsShards(int n) {
    for (Layer* l : parts()) l->setStatisticsShards(n);
}

void Bottleneck::setOpPath(std::string path) {
    for (size_t i = 0; i < main_.size(); ++i) main_[i]->setOpPath(path + "/" + kMainNames[i]);
    for (size_t i = 0; i < shortcut_.size(); ++i) shortcut_[i]->setOpPath(path + "/" + kShortcutNames[i]);
    Layer::setOpPath(std::move(path));
}

std::unique_ptr<Bottleneck::Plan> Bottleneck::makePlan(const memory::desc& inMd, const memory::desc& outMd,
                                                       const memory::desc& shortcutMd, bool training) {
    const auto& eng = device_.engine();
    auto p = std::make_unique<Plan>();
    p->inMd = inMd;
    p->outMd = outMd;
    p->shortcutMd = shortcutMd;
    // Out of place: oneDNN 2.6's binary add left a blocked (aBcd16b) destination unchanged when it
    // was also the first source.
    p->add = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, outMd, outMd, outMd), reluAttr(true), eng));
    p->out = Tensor(outMd, eng);
    const Dims outDims = outMd.dims(), inDims = inMd.dims();
    p->addOp = addOp(opcost::binaryAdd(outDims, true), "add");
    if (!training) return p;
    constexpr auto kRelu = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    dnnl::eltwise_forward::primitive_desc hint({dnnl::prop_kind::forward_training, kRelu, outMd}, eng);
    p->reluBwd = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc({kRelu, outMd, outMd}, eng, hint));
    p->reluBwdOp = addOp(opcost::elementwise("eltwise_relu_backward", outDims, 3, 1.0), "relu");
    if (needsInputGrad_) {
        p->gradAdd = dnnl::binary(dnnl::binary::primitive_desc(
            dnnl::binary::desc(dnnl::algorithm::binary_add, inMd, inMd, inMd), eng));
        p->gradIn = Tensor(inMd, eng);
        p->gradAddOp = addOp(opcost::binaryAdd(inDims, false), "add_backward");
    }
    return p;
}

Tensor& Bottleneck::forward(Tensor& input, bool training) {
    Tensor* y = &input;
    for (auto& l : main_) y = &l->forward(*y, training);
    Tensor* s = &input;
    for (auto& l : shortcut_) s = &l->forward(*s, training);
    Plan& p = plans_.get(batchOf(input), training, [&] { return makePlan(input.desc(), y->desc(), s->desc(), training); },
                         [&](const Plan& q) {
                             return q.inMd == input.desc() && q.outMd == y->desc() && q.shortcutMd == s->desc();
                         });
    Tensor& shortcut = p.shortcutConv.convert(*s, y->desc(), device_);
    {
        prof::OpTimer timer(p.addOp);
        p.add.execute(device_.stream(),
                      {{DNNL_ARG_SRC_0, y->mem()}, {DNNL_ARG_SRC_1, shortcut.mem()}, {DNNL_ARG_DST, p.out.mem()}});
    }
    return p.out;
}

Tensor* Bottleneck::backward(Tensor& gradOutput) {
    Plan& p = *plans_.current();
    Tensor& g = p.gradOutConv.convert(gradOutput, p.outMd, device_);
    {
        prof::OpTimer timer(p.reluBwdOp);
        p.reluBwd.execute(device_.stream(),
                          {{DNNL_ARG_DST, p.out.mem()}, {DNNL_ARG_DIFF_DST, g.mem()}, {DNNL_ARG_DIFF_SRC, g.mem()}});
    }
    // Both branches read g and none writes it; each returns its input gradient in its own buffers.
    Tensor* gs = &g;
    for (size_t i = shortcut_.size(); i-- > 0;) gs = shortcut_[i]->backward(*gs);
    Tensor* gm = &g;
    for (size_t i = main_.size(); i-- > 0 && gm;) gm = main_[i]->backward(*gm);
    if (!needsInputGrad_) return nullptr;
    Tensor& fromShortcut = p.gradShortcutConv.convert(*gs, p.inMd, device_);
    prof::OpTimer timer(p.gradAddOp);
    p.gradAdd.execute(device_.stream(),
                      {{DNNL_ARG_SRC_0, gm->mem()}, {DNNL_ARG_SRC_1, fromShortcut.mem()}, {DNNL_ARG_DST, p.gradIn.mem()}});
    return &p.gradIn;
}

void Bottleneck::describeOps(int64_t batch, bool training, std::vector<OpDesc>& out) const {
    for (const auto& l : main_) l->describeOps(batch, training, out);
    for (const auto& l : shortcut_) l->describeOps(batch, training, out);
    const Dims outDims = batchDims(batch, out_), inDims = batchDims(batch, in_);
    out.push_back(describedOp(opcost::binaryAdd(outDims, true), StepPart::Forward, {}, "add"));
    if (!training) return;
    out.push_back(describedOp(opcost::elementwise("eltwise_relu_backward", outDims, 3, 1.0), StepPart::Backward, {}, "relu"));
    if (needsInputGrad_) out.push_back(describedOp(opcost::binaryAdd(inDims, false), StepPart::Backward, {}, "add_backward"));
}

}  // namespace trainbench::engine
