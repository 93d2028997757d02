// Actions for an input-bound run (domain.md: store data efficiently; parallelize reads; (not
// ideal) reduce batch size), in catalogue order: the one-click pipeline changes first, then the
// change that needs a conversion run before it (TFRecord shards), then autotune. The one-click
// changes that the model below estimates (prefetch, parallel reads, parallel parsing) come in the
// order of their estimates: which helps most depends on the run (prefetching a step whose input
// is 90 % of it hides little; reading 8 small files at once can hide most of it).
//
// Estimates use one model of the pipeline. Per step, R = step - input is the rest of the step and
// P the time to make a batch: with no prefetch the trainer makes it itself, so P = input wait;
// with prefetch a producer makes it alongside, and a trainer that still waits is waiting for a
// producer that needs about a whole step (P = step). A change that makes production k times faster
// and/or turns prefetch on gives step' = max(R, P/k) with prefetch, R + P/k without. k is an upper
// bound (it assumes the changed stage is the whole of P), so these are "at most" figures.
#include <algorithm>
#include <filesystem>

#include "profiler/verdict/actioncatalogue.h"
#include "profiler/verdict/evidencetext.h"

namespace trainbench::profiler {

namespace {

namespace fs = std::filesystem;
using catalogue::factor;

constexpr int64_t kCycle = 8;        // files read at once (the io-fixed-shards experiment's value)
constexpr int64_t kDeepPrefetch = 8;
constexpr int kShards = 16;          // docs/cli.md's example

bool streaming(const std::string& dataset) {
    return dataset == "tfrecord" || dataset == "csv" || dataset == "images" || dataset == "example_files";
}

struct PipelineModel {
    double step, rest, production;
    bool prefetch;
    double speedup(double k, bool prefetchAfter) const {
        const double p = production / k;
        const double after = prefetchAfter ? std::max(rest, p) : rest + p;
        return after > 0 ? catalogue::capSpeedup(step / after) : kMaxSpeedup;
    }
};

std::string quoted(const std::string& s) {
    if (s.find_first_of(" '\"$\\*?") == std::string::npos) return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Where converted shards go: a "tfrecord" folder beside the files' folder.
std::string shardFolder(const std::string& trainFiles) {
    fs::path p(trainFiles);
    if (!p.has_filename()) p = p.parent_path();  // trailing slash
    if (trainFiles.find_first_of("*?[") != std::string::npos) p = p.parent_path();  // a glob: its folder
    return (p.parent_path() / "tfrecord").string();
}

std::optional<Candidate> convertAction(const ActionContext& ctx, const std::string& dataset) {
    const ExperimentView& v = ctx.experiment;
    const nlohmann::json train = v.at("data.train_files"), test = v.at("data.test_files");
    if (!train.is_string() || !test.is_string()) return std::nullopt;
    const std::string out = shardFolder(train.get<std::string>());
    auto toDataset = v.change("data.dataset", "tfrecord");
    auto toTrain = v.change("data.train_files", (fs::path(out) / "train-*.tfrecord").string());
    auto toTest = v.change("data.test_files", (fs::path(out) / "test-*.tfrecord").string());
    if (!toDataset || !toTrain || !toTest) return std::nullopt;
    auto command = [&](const std::string& input, const char* split) {
        return "trainbench-cli convert --from " + dataset + " --input " + quoted(input) + " --split " + split +
               " --to tfrecord --shards " + std::to_string(kShards) + " " + quoted(out);
    };
    const bool smallFiles = dataset == "example_files";
    return catalogue::make(
        BoundKind::Input, "Convert the data to TFRecord shards", {toDataset, toTrain, toTest},
        std::string(smallFiles ? "One file open per shard instead of one per example"
                               : "Records parsed once at conversion instead of every epoch") +
            "; needs the conversion first: " + command(train.get<std::string>(), "train") + " && " +
            command(test.get<std::string>(), "test"),
        std::nullopt,
        std::string(smallFiles ? "Too many small files: time goes into opening each one. " : "Inputs that need parsing. ") +
            "Store data efficiently: pre-convert inputs once into large record files (domain.md). Ranked after the "
            "one-click changes because it needs the conversion commands to run before the new experiment can.");
}

}  // namespace

std::vector<Candidate> inputActions(const ActionContext& ctx) {
    const ExperimentView& v = ctx.experiment;
    const StepTotals& t = ctx.steps;
    std::vector<Candidate> out;
    auto push = [&](std::optional<Candidate> c) {
        if (c) out.push_back(std::move(*c));
    };
    const std::string dataset = v.text("data.dataset");
    const int64_t batch = v.integer("train.batch_size");
    auto smallerBatch = [&] {
        return catalogue::make(
            BoundKind::Input, "Halve the batch", {v.change("train.batch_size", batch / 2)},
            "Less input per step, but also less compute; samples per second rarely improve, and the learning rate "
            "may need scaling down with the batch.",
            std::nullopt, "domain.md: input-bound, (not ideal) reduce batch size.", true);
    };
    const double step = t.step, input = t.input_seconds;
    const int64_t prefetch = v.integer("data.pipeline.prefetch");
    const PipelineModel model{step, step - input, prefetch == 0 ? input : step, prefetch > 0};
    const double allHidden = step - input > 0 ? catalogue::capSpeedup(step / (step - input)) : kMaxSpeedup;
    // The bound over all input actions, when it says more than the action's own estimate.
    auto bound = [&](double own) {
        return own < allHidden - 0.005 ? " At most " + factor(allHidden) + " if all input wait were hidden." : std::string();
    };
    const bool autotune = v.flag("data.pipeline.autotune");
    auto prefetchAction = [&] {
        const double s = model.speedup(1.0, true);
        return catalogue::make(
            BoundKind::Input, "Prefetch batches on a background thread", {v.change("data.pipeline.prefetch", 2)},
            "The next batch is made while the step computes: a step takes about the longer of the rest of the step (" +
                text::fixed(model.rest / static_cast<double>(t.count) * 1e3, 2) + " ms) and input (" +
                text::fixed(input / static_cast<double>(t.count) * 1e3, 2) + " ms) instead of their sum: " + factor(s) +
                "." + bound(s),
            s, "With prefetch 0 every bit of input time is waiting time; prefetching overlaps input with compute.");
    };
    if (!streaming(dataset)) {
        // IDX data is in memory: prefetch is the one pipeline key that applies to it.
        if (!autotune && prefetch == 0) push(prefetchAction());
        push(smallerBatch());
        out.push_back(catalogue::textOnly(
            BoundKind::Input, "Look at batch assembly",
            prefetch == 0 ? "IDX data is held in memory: the input wait is the trainer gathering and scaling the "
                            "batch's rows."
                          : "IDX data is held in memory and its batches are prefetched, yet the trainer waits: gathering "
                            "and scaling a batch's rows takes longer than the rest of a step (a busy core, or pages of "
                            "the data set swapped out).",
            "The read and parse keys (parallel reads, map_parallel_calls, cache) apply to streaming data sets only."));
        return out;
    }

    const auto estimated = static_cast<std::ptrdiff_t>(out.size());  // where the estimated ones start
    if (!autotune && prefetch == 0) push(prefetchAction());
    const int64_t cycle = v.integer("data.pipeline.cycle_length");
    const bool parallel = v.flag("data.pipeline.parallel_reads");
    if (!autotune && (!parallel || cycle < kCycle)) {
        const double k = static_cast<double>(kCycle) / static_cast<double>(parallel ? cycle : 1);
        const double s = model.speedup(k, model.prefetch);
        push(catalogue::make(
            BoundKind::Input, "Read 8 files in parallel",
            {v.change("data.pipeline.parallel_reads", true),
             cycle < kCycle ? v.change("data.pipeline.cycle_length", kCycle) : std::nullopt},
            "8 files read at once, each on its own thread: reads (and, with slow storage, their latencies) overlap. At "
            "most " + factor(s) + " if reading were all of the input time." + bound(s),
            s, "Parallelize reads: too few files read at once leave the storage's streams idle (domain.md)."));
    }
    const int64_t calls = v.integer("data.pipeline.map_parallel_calls");
    const int threads = ctx.input.threads > 0 ? ctx.input.threads : ctx.input.host_cores > 0 ? ctx.input.host_cores : 2;
    const int64_t wantCalls = std::max<int64_t>(2, threads);
    if (!autotune && calls < wantCalls) {
        const double s = model.speedup(static_cast<double>(wantCalls) / static_cast<double>(calls), model.prefetch);
        push(catalogue::make(
            BoundKind::Input, "Parse records on " + std::to_string(wantCalls) + " threads",
            {v.change("data.pipeline.map_parallel_calls", wantCalls)},
            "Parsing and decoding spread over " + std::to_string(wantCalls) + " threads. At most " + factor(s) +
                " if parsing were all of the input time." + bound(s),
            s, "Inputs that need parsing: map in parallel (domain.md)."));
    }
    // The estimated one-click changes, best estimate first (stable: a tie keeps the order above).
    std::stable_sort(out.begin() + estimated, out.end(), [](const Candidate& a, const Candidate& b) {
        return a.action.expected_speedup.value_or(1.0) > b.action.expected_speedup.value_or(1.0);
    });
    if (!autotune && prefetch > 0 && prefetch < kDeepPrefetch)
        push(catalogue::make(
            BoundKind::Input, "Prefetch deeper", {v.change("data.pipeline.prefetch", kDeepPrefetch)},
            "A deeper queue rides out slow reads (storage latency spikes, a busy core); it cannot make the producer "
            "faster on average.",
            std::nullopt, "Prefetch hides input time only as long as the queue holds batches."));
    const int64_t epochs = v.integer("train.epochs");
    bool roomy = true;
    if (ctx.input.memory && ctx.input.memory->device_source == "host RAM" && ctx.input.memory->device_bytes > 0)
        roomy = ctx.input.memory->peak_rss_bytes < 0.5 * ctx.input.memory->device_bytes;
    if (!v.flag("data.pipeline.cache") && epochs >= 2 && roomy)
        push(catalogue::make(
            BoundKind::Input, "Cache the records in memory", {v.change("data.pipeline.cache", true)},
            "Epochs 2 to " + std::to_string(epochs) + " read no files: the storage part of the input wait goes for " +
                text::percent(static_cast<double>(epochs - 1) / static_cast<double>(epochs)) +
                " % of the run (records are still shuffled and decoded). Needs the training records in free memory.",
            std::nullopt, "Low-throughput storage: read it once (tf.data's cache)."));
    if (dataset == "example_files" || dataset == "csv" || dataset == "images") push(convertAction(ctx, dataset));
    if (!autotune)
        push(catalogue::make(
            BoundKind::Input, "Let the pipeline tune itself", {v.change("data.pipeline.autotune", true)},
            "cycle_length, parallel_reads, map_parallel_calls and prefetch are measured and chosen before training (the "
            "values in the file are then ignored; the choice is recorded with the run).",
            std::nullopt, "tf.data's AUTOTUNE: the right values depend on the storage and the cores."));
    push(smallerBatch());
    return out;
}

}  // namespace trainbench::profiler
