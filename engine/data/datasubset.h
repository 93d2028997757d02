#pragma once
// data.fraction: which training examples a run keeps when it trains on a fraction of its data set.
//
// The kept examples are a prefix of one fixed order of the training set, drawn from
// data.subset_seed alone, never from the run's seed: every seed of a data-scaling sweep trains on
// the same examples, so the sweep measures data rather than luck, and the subset of a smaller
// fraction lies inside that of a larger one (1/32 inside 1/16 inside ... inside the whole set).
// When labels are known the order is class-stratified: class c's examples, shuffled, are spread
// through the order at even spacing (systematic sampling), so any prefix holds each class in
// proportion to its size, within about one example, and small fractions keep every class.
#include <cstdint>
#include <vector>

namespace trainbench::engine {

// Examples kept of n: round(fraction x n), halves rounded up. fraction must be in (0, 1].
int64_t subsetSize(int64_t n, double fraction);

// A permutation of 0 .. labels.size()-1 whose prefixes are the subsets. A negative label means
// "unknown": all such examples form one class of their own (with no label known at all, the
// order is a plain seeded shuffle).
std::vector<int64_t> subsetOrder(const std::vector<int32_t>& labels, uint64_t subsetSeed);

// The indices kept, ascending: the first subsetSize(labels.size(), fraction) of subsetOrder.
std::vector<int64_t> subsetIndices(const std::vector<int32_t>& labels, double fraction, uint64_t subsetSeed);

}  // namespace trainbench::engine
