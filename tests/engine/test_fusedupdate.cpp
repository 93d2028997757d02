// Updating each layer during backward (as the trainer does) must give exactly the same parameters as
// one optimizer step over the whole buffer after backward.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "engine/util/rng.h"

using namespace trainbench::engine;

namespace {

std::vector<float> train(const OptimizerConfig& oc, bool fused, const char* preset) {
    CpuDevice dev(2);
    ModelSpec spec;
    spec.preset = preset;
    spec.layers = presetLayers(preset);
    Model model(spec, {1, 28, 28}, 10, dev, 7);
    auto opt = Optimizer::create(oc, model.paramCount());
    const int64_t n = 16;
    AlignedBuffer x(static_cast<size_t>(n * 784));
    std::vector<int32_t> y(n);
    Tensor grad(Tensor::plainDesc({n, 10}), dev.engine());
    for (int64_t step = 1; step <= 4; ++step) {
        Rng rng(static_cast<uint64_t>(step));
        for (size_t i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform();
        for (auto& l : y) l = static_cast<int32_t>(rng.below(10));
        Tensor& logits = model.forward(x.data(), n, true, static_cast<uint64_t>(step));
        dev.stream().wait();
        SoftmaxCrossEntropy::compute(logits, y.data(), &grad);
        if (fused) {
            model.backward(grad, [&](int64_t off, int64_t count) {
                opt->update(model.params(), model.grads(), off, off + count, step);
            });
        } else {
            model.backward(grad);
            dev.stream().wait();
            opt->step(model.params(), model.grads(), model.paramCount(), step);
        }
    }
    return {model.params(), model.params() + model.paramCount()};
}

void expectBitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

}  // namespace

TEST(FusedUpdate, AdamPerLayerEqualsWholeBuffer) {
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.weight_decay = 1e-4f;
    for (const char* preset : {"mlp", "cnn"}) expectBitwiseEqual(train(oc, true, preset), train(oc, false, preset));
}

TEST(FusedUpdate, SgdMomentumPerLayerEqualsWholeBuffer) {
    OptimizerConfig oc;
    oc.kind = OptimizerKind::SGD;
    oc.learning_rate = 0.05f;
    oc.momentum = 0.9f;
    oc.nesterov = true;
    for (const char* preset : {"mlp", "cnn"}) expectBitwiseEqual(train(oc, true, preset), train(oc, false, preset));
}

TEST(FusedUpdate, EveryParameterIsUpdatedExactlyOnce) {
    // Plain SGD with lr 1 and a fixed gradient: each element moves by exactly -g once per step.
    CpuDevice dev(1);
    ModelSpec spec;
    spec.preset = "cnn";
    spec.layers = presetLayers("cnn");
    Model model(spec, {1, 28, 28}, 10, dev, 3);
    std::vector<int64_t> seen(static_cast<size_t>(model.paramCount()), 0);
    AlignedBuffer x(static_cast<size_t>(2 * 784));
    Tensor grad(Tensor::plainDesc({2, 10}), dev.engine());
    std::vector<int32_t> y{1, 2};
    Tensor& logits = model.forward(x.data(), 2, true);
    dev.stream().wait();
    SoftmaxCrossEntropy::compute(logits, y.data(), &grad);
    model.backward(grad, [&](int64_t off, int64_t count) {
        for (int64_t i = off; i < off + count; ++i) ++seen[static_cast<size_t>(i)];
    });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "parameter " << i;
}
