// TF_CONFIG cluster specs: TensorFlow's examples parse, ranks follow TensorFlow's order (chief
// first), and every mistake is named by its key path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "engine/strategy/clusterspec.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

using test::errorOf;

TEST(ClusterSpec, ParsesTensorFlowsFormAndRanksChiefFirst) {
    const ClusterSpec s = parseClusterSpec(R"({
        "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"], "ps": ["host3:2222"]},
        "task": {"type": "worker", "index": 1}})");
    EXPECT_EQ(s.trainers(), 3);
    EXPECT_EQ(s.rank(), 2);
    EXPECT_EQ(s.coordinator().text(), "host0:2222");
    EXPECT_EQ(s.self().text(), "host2:2222");
    EXPECT_EQ(s.ps.size(), 1u);
    EXPECT_FALSE(s.loopbackOnly());

    // No chief: worker 0 coordinates (MultiWorkerMirroredStrategy's convention).
    const ClusterSpec w = parseClusterSpec(R"({"cluster": {"worker": ["localhost:5000", "127.0.0.1:5001"]},
                                               "task": {"type": "worker", "index": 0}})");
    EXPECT_EQ(w.rank(), 0);
    EXPECT_EQ(w.coordinator().port, 5000);
    EXPECT_TRUE(w.loopbackOnly());
    const ClusterSpec ps = parseClusterSpec(R"({"cluster": {"worker": ["a:1"], "ps": ["b:2"]}, "task": {"type": "ps"}})");
    EXPECT_EQ(ps.rank(), -1);
    EXPECT_EQ(ps.self().text(), "b:2");
}

TEST(ClusterSpec, RoundTripsThroughItsJson) {
    ClusterSpec s = localClusterSpec(3, 2, 41000);
    s.task_type = "worker";
    s.task_index = 1;
    const ClusterSpec back = parseClusterSpec(clusterSpecJson(s));
    EXPECT_EQ(back.chief.size(), 1u);
    EXPECT_EQ(back.worker.size(), 2u);
    EXPECT_EQ(back.ps.size(), 2u);
    EXPECT_EQ(back.worker[1].text(), "127.0.0.1:41002");
    EXPECT_EQ(back.ps[1].port, 41004);
    EXPECT_EQ(back.rank(), 2);
    EXPECT_EQ(clusterSpecJson(back), clusterSpecJson(s));
}

TEST(ClusterSpec, MistakesAreNamedByKeyPath) {
    auto err = [](const std::string& text) { return errorOf<std::invalid_argument>([&] { parseClusterSpec(text, "job.json"); }); };
    EXPECT_EQ(err("{"), err("{"));  // deterministic
    EXPECT_NE(err("{").find("job.json: not valid JSON"), std::string::npos);
    EXPECT_EQ(err(R"({"task": {"type": "chief"}})"), "job.json: cluster: missing, or not an object");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:1", "b"]}, "task": {"type": "worker"}})"),
              "job.json: cluster.worker[1]: expected \"host:port\", got \"b\"");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:99999"]}, "task": {"type": "worker"}})"),
              "job.json: cluster.worker[0]: port '99999' is not a number from 1 to 65535");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}})"),
              "job.json: task.index: 1 is outside cluster.worker (1 task(s))");
    EXPECT_EQ(err(R"({"cluster": {"workers": ["a:1"]}, "task": {"type": "worker"}})"),
              "job.json: cluster.workers: unknown task type (known: chief, worker, ps)");
    EXPECT_EQ(err(R"({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief"}})"),
              "job.json: cluster.chief: there can be only one chief, got 2");
    EXPECT_EQ(err(R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "ps"}})"),
              "job.json: cluster: needs a chief or at least one worker");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:1", "a:1"]}, "task": {"type": "worker"}})"),
              "job.json: cluster: address a:1 is given to two tasks");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "boss"}})"),
              "job.json: task.type: 'boss' is not chief, worker, ps or evaluator");
    EXPECT_EQ(err(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})"),
              "job.json: task.index: expected an integer, got \"0\"");
}

TEST(ClusterSpec, NestingAndSizeAreLimitedBeforeParsing) {
    const std::string deep = R"({"cluster": {"worker": )" + std::string(100000, '[') + std::string(100000, ']') + "}}";
    EXPECT_EQ(errorOf<std::invalid_argument>([&] { parseClusterSpec(deep, "TF_CONFIG"); }),
              "TF_CONFIG: cluster.worker[0][0][0][0][0][0]: nesting deeper than 8 levels of { and [ "
              "(byte 29 (line 1, column 30))");
    const std::string big = R"({"cluster": {"worker": [")" + std::string(1u << 20, 'a') + R"(:1"]}})";
    EXPECT_NE(errorOf<std::invalid_argument>([&] { parseClusterSpec(big, "TF_CONFIG"); }).find("over the limit of 1048576"), std::string::npos);
}

TEST(ClusterSpec, ReadFromTheEnvironment) {
    unsetenv("TF_CONFIG");
    EXPECT_FALSE(clusterSpecFromEnvironment());
    setenv("TF_CONFIG", R"({"cluster": {"worker": ["127.0.0.1:7000"]}, "task": {"type": "worker", "index": 0}})", 1);
    const auto s = clusterSpecFromEnvironment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->self().port, 7000);
    setenv("TF_CONFIG", "{}", 1);
    EXPECT_EQ(errorOf<std::invalid_argument>([] { clusterSpecFromEnvironment(); }), "TF_CONFIG: cluster: missing, or not an object");
    unsetenv("TF_CONFIG");
}

}  // namespace
}  // namespace trainbench::engine
