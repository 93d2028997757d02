// A run's checkpoint as a servable graph (engine/graph/servablegraph.h): the checkpoint a run
// writes loads into a graph that predicts what the trained model predicts; a spec that is not the
// checkpoint's model, a checkpoint without the running statistics and a damaged file are refused
// naming the file and what differs.
#include <gtest/gtest.h>

#include "engine/checkpoint/modellayout.h"
#include "engine/checkpoint/trainingcheckpoint.h"
#include "engine/graph/graphpasses.h"
#include "engine/graph/servablegraph.h"
#include "engine/inference/compiledgraph.h"
#include "engine/optim/optimizer.h"
#include "tests/engine/inferencemodels.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

using namespace testmodels;
using namespace testinference;

class ServableGraph : public test::TempDirTest {
protected:
    // A checkpoint as trainbench-cli run writes it (app/run/runobservers.cpp): training shards plus
    // the model's layout.
    std::string save(Model& m, bool withState = true) {
        auto opt = Optimizer::create(OptimizerConfig{}, m.paramCount());
        CheckpointWriter w;
        saveTraining(w, m.params(), m.paramCount(), *opt, withState ? m.state() : std::span<const float>{});
        saveModelLayout(w, m);
        w.commit(path("run.ckpt"));
        return path("run.ckpt");
    }
    graph::ServableSource source(const std::string& presetName) const {
        graph::ServableSource s;
        s.spec = preset(presetName);
        s.sample_shape = {1, 28, 28};
        s.classes = 10;
        s.metadata.input_scale = 1.0f / 255.0f;
        return s;
    }
};

TEST_F(ServableGraph, PredictsWhatTheTrainedModelPredicts) {
    CpuDevice dev(2);
    Model m(preset("resnet_small"), {1, 28, 28}, 10, dev, 4);
    trainSteps(m, 3, 50);
    const std::string ck = save(m);
    const graph::Graph g = graph::loadServableGraph(ck, source("resnet_small"));
    EXPECT_EQ(g.metadata.source_run, "checkpoint " + ck);
    EXPECT_EQ(g.metadata.input_scale, 1.0f / 255.0f);

    std::vector<float> pixels = testref::randomValues(3 * 784, 6, 0.0f, 255.0f), x = pixels;
    for (float& v : x) v *= 1.0f / 255.0f;
    inference::CompiledGraph c(graph::optimizeForInference(g), dev);
    std::vector<float> logits(30);
    c.run(pixels.data(), 3, logits.data());
    EXPECT_LE(maxRelativeError(logits, modelLogits(m, x, 3)), 1e-5);
}

TEST_F(ServableGraph, RefusesAnotherModelNamingTheLayer) {
    CpuDevice dev(1);
    Model m(preset("cnn"), {1, 28, 28}, 10, dev, 4);
    const std::string ck = save(m);
    const std::string e = test::errorOf([&] { graph::loadServableGraph(ck, source("mlp")); });
    EXPECT_NE(e.find(ck + ": the checkpoint holds another model: layer 0"), std::string::npos) << e;
}

TEST_F(ServableGraph, RefusesACheckpointWithoutTheRunningStatistics) {
    CpuDevice dev(1);
    Model m(preset("resnet_small"), {1, 28, 28}, 10, dev, 4);
    const std::string ck = save(m, false);
    const std::string e = test::errorOf([&] { graph::loadServableGraph(ck, source("resnet_small")); });
    EXPECT_NE(e.find(ck + ": the checkpoint does not fit the run's model"), std::string::npos) << e;
    EXPECT_NE(e.find("no shard 'model.state'"), std::string::npos) << e;
}

TEST_F(ServableGraph, RefusesADamagedFile) {
    test::writeText(path("bad.ckpt"), "not a checkpoint at all, just text");
    const std::string e = test::errorOf([&] { graph::loadServableGraph(path("bad.ckpt"), source("mlp")); });
    EXPECT_NE(e.find("not a trainbench checkpoint"), std::string::npos) << e;
}

}  // namespace
}  // namespace trainbench::engine
