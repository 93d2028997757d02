#pragma once
// data.fraction applied to the two kinds of training source: the in-memory IDX set and the files of
// a streaming source (datasubset.h says which examples are kept). Only the training split is ever
// subsetted; the subset is taken before any sharding, so the shards of a multi-worker run split
// exactly the subset between them.
#include <cstdint>
#include <vector>

#include "engine/data/imagedataset.h"
#include "engine/data/pipeline/streamingpipeline.h"

namespace trainbench::engine {

// Keeps the subset's examples of `ds` in their file order (stratified by its labels).
void keepSubset(ImageDataset& ds, double fraction, uint64_t subsetSeed);

// The files, and within each the records, of the subset of `all`, from the label of every record
// in file order (StreamingPipeline::readLabels). Files left with no kept record are dropped;
// examples is set to the subset's size.
SourceFiles keepSubset(SourceFiles all, const std::vector<std::vector<int32_t>>& labelsByFile, double fraction,
                       uint64_t subsetSeed);

}  // namespace trainbench::engine
