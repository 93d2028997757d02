// The model runs ReLU -> MaxPool2D as MaxPool2D -> ReLU. The result and every gradient must be what
// the layers give in the order the user wrote them.
#include <gtest/gtest.h>

#include "engine/layers/conv2d.h"
#include "engine/layers/dense.h"
#include "engine/layers/flatten.h"
#include "engine/layers/maxpool2d.h"
#include "engine/layers/relu.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "tests/engine/reference.h"

using namespace trainbench::engine;
using namespace trainbench::engine::testref;

TEST(ExecutionOrder, ReluBeforePoolRunsAfterItAndNothingElseMoves) {
    auto order = Model::executionOrder(presetLayers("cnn"));
    // cnn: conv relu pool conv relu pool flatten dense relu dense
    EXPECT_EQ(order, (std::vector<size_t>{0, 2, 1, 3, 5, 4, 6, 7, 8, 9}));
    EXPECT_EQ(Model::executionOrder(presetLayers("mlp")), (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ExecutionOrder, SameLogitsAndGradientsAsTheWrittenOrder) {
    CpuDevice dev(2);
    ModelSpec spec;
    spec.layers = presetLayers("cnn");
    spec.layers[0].filters = 4;
    spec.layers[3].filters = 6;
    spec.layers[7].units = 12;
    const int64_t n = 3;
    Model model(spec, {1, 14, 14}, 10, dev, 11);

    // The same network built layer by layer in the written order, on copies of the model's weights.
    std::vector<float> params(model.params(), model.params() + model.paramCount());
    std::vector<float> grads(params.size(), 0.0f);
    std::vector<std::unique_ptr<Layer>> ref;
    ref.push_back(std::make_unique<Conv2D>(dev, Dims{1, 14, 14}, 4, 3, 1, 0, true));
    ref.push_back(std::make_unique<ReLU>(dev, Dims{4, 12, 12}));
    ref.push_back(std::make_unique<MaxPool2D>(dev, Dims{4, 12, 12}, 2, 2));
    ref.push_back(std::make_unique<Conv2D>(dev, Dims{4, 6, 6}, 6, 3, 1, 0, true));
    ref.push_back(std::make_unique<ReLU>(dev, Dims{6, 4, 4}));
    ref.push_back(std::make_unique<MaxPool2D>(dev, Dims{6, 4, 4}, 2, 2));
    ref.push_back(std::make_unique<Flatten>(dev, Dims{6, 2, 2}));
    ref.push_back(std::make_unique<Dense>(dev, Dims{24}, 12, true));
    ref.push_back(std::make_unique<ReLU>(dev, Dims{12}));
    ref.push_back(std::make_unique<Dense>(dev, Dims{12}, 10, true));
    int64_t off = 0;
    bool needed = false;
    for (auto& l : ref) {
        l->setNeedsInputGrad(needed);
        if (l->paramCount()) {
            l->bindParams(params.data() + off, grads.data() + off);
            off += l->paramCount();
            needed = true;
        }
    }
    ASSERT_EQ(off, model.paramCount());

    Values x = randomValues(n * 14 * 14, 5, 0.0f, 1.0f), xCopy = x;
    std::vector<int32_t> labels{3, 7, 1};
    Tensor& logits = model.forward(x.data(), n, true);
    Tensor in = fromVector(xCopy, plain({n, 1, 14, 14}), dev);
    Tensor* t = &in;
    for (auto& l : ref) t = &l->forward(*t, true);
    dev.stream().wait();
    Values got = toVector(logits, dev), want = toVector(*t, dev);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "logit " << i;

    Tensor g1(plain({n, 10}), dev.engine()), g2(plain({n, 10}), dev.engine());
    SoftmaxCrossEntropy::compute(logits, labels.data(), &g1);
    SoftmaxCrossEntropy::compute(*t, labels.data(), &g2);
    model.backward(g1);
    Tensor* g = &g2;
    for (size_t i = ref.size(); i-- > 0 && g;) g = ref[i]->backward(*g);
    dev.stream().wait();
    for (int64_t i = 0; i < model.paramCount(); ++i)
        ASSERT_FLOAT_EQ(model.grads()[i], grads[static_cast<size_t>(i)]) << "parameter " << i;
}
