// The experiment's enumerated settings that the engine reads as enums (data.pipeline.shard_by,
// strategy.batch_scope): their names are the experiment file's words, each parses back, and
// anything else is not a value (the schema reports it before the engine sees it).
#include <gtest/gtest.h>

#include "engine/data/dataconfig.h"
#include "engine/strategy/strategyconfig.h"

namespace trainbench::engine {
namespace {

TEST(ConfigEnums, ShardByNamesParseBack) {
    EXPECT_EQ(shardByName(ShardBy::File), "file");
    EXPECT_EQ(shardByName(ShardBy::Element), "element");
    for (ShardBy by : {ShardBy::File, ShardBy::Element}) EXPECT_EQ(parseShardBy(shardByName(by)), by);
    for (const char* bad : {"", "File", "files", "record", " element"})
        EXPECT_FALSE(parseShardBy(bad).has_value()) << bad;
    EXPECT_EQ(PipelineConfig{}.shard_by, ShardBy::File) << "the documented default";
}

TEST(ConfigEnums, BatchScopeNamesParseBack) {
    EXPECT_EQ(batchScopeName(BatchScope::Global), "global");
    EXPECT_EQ(batchScopeName(BatchScope::PerReplica), "per_replica");
    for (BatchScope s : {BatchScope::Global, BatchScope::PerReplica}) EXPECT_EQ(parseBatchScope(batchScopeName(s)), s);
    for (const char* bad : {"", "Global", "per-replica", "replica", "per_replica "})
        EXPECT_FALSE(parseBatchScope(bad).has_value()) << bad;
    EXPECT_EQ(StrategyConfig{}.batch_scope, BatchScope::Global) << "the documented default";
}

}  // namespace
}  // namespace trainbench::engine
