// URLs and the timing header as the load generator reads them.
#include <gtest/gtest.h>

#include "app/loadtest/loadtestoptions.h"
#include "app/loadtest/servertiming.h"

namespace trainbench::app::loadtest {
namespace {

TEST(TargetUrl, ReadsHostPortAndModel) {
    const PredictTarget t = parseTargetUrl("http://127.0.0.1:8501/v1/models/fashion", "default");
    EXPECT_EQ(t.host, "127.0.0.1");
    EXPECT_EQ(t.port, 8501);
    EXPECT_EQ(t.model, "fashion");
    EXPECT_EQ(parseTargetUrl("http://[::1]:9000", "m").host, "::1");
    EXPECT_THROW(parseTargetUrl("https://x:1", "m"), LoadTestError);
    EXPECT_THROW(parseTargetUrl("http://x", "m"), LoadTestError);
    EXPECT_THROW(parseTargetUrl("http://x:1/v2/models/m", "m"), LoadTestError);
}

TEST(ServerTiming, ParsesTheHeaderAndSkipsUnknownKeys) {
    std::string error;
    const ServerTiming t =
        parseServerTiming("decode_us=3,queue_us=10,batch_us=20,compute_us=300,encode_us=4,batch=8,padded=0", error);
    EXPECT_TRUE(error.empty());
    EXPECT_TRUE(t.present);
    EXPECT_EQ(t.queueUs, 10);
    EXPECT_EQ(t.batch, 8);
    EXPECT_EQ(t.totalUs(), 337);
    EXPECT_FALSE(parseServerTiming("queue_us=1x", error).present);
    EXPECT_NE(error.find("queue_us"), std::string::npos);
}

}  // namespace
}  // namespace trainbench::app::loadtest
