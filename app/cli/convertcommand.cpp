// trainbench-cli convert: data sources to TFRecord shards or one file per example.
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "engine/data/convert/converter.h"
#include "engine/util/errors.h"

namespace trainbench::cli {

int convertCommand(const ConvertArgs& args) {
    engine::ConvertOptions o;
    engine::DataConfig& src = o.source;
    src.dataset = args.from;
    if (args.from == "fashion-mnist" || args.from == "idx") {
        if (!args.input.empty()) src.path = args.input;
    } else {
        if (args.input.empty()) {
            std::fprintf(stderr, "convert: --from %s needs --input (a folder, a glob or a file)\n", args.from.c_str());
            return kExitUsage;
        }
        if (args.split != "train" && args.split != "test") {
            std::fprintf(stderr, "convert: --from %s converts one split at a time: give --split train or --split test\n",
                         args.from.c_str());
            return kExitUsage;
        }
        src.train_files = src.test_files = args.input;
    }
    src.pipeline.compression = args.input_compression;
    src.channels = args.channels;
    o.output_dir = args.output;
    o.to = args.to;
    o.shards = args.shards;
    o.compression = args.compression;
    o.limit = args.limit;

    const bool tty = ::isatty(STDERR_FILENO) != 0;
    std::vector<bool> splits;
    if (args.split == "train" || args.split == "both") splits.push_back(true);
    if (args.split == "test" || args.split == "both") splits.push_back(false);
    try {
        for (bool train : splits) {
            o.train = train;
            const char* name = train ? "train" : "test";
            auto progress = [&](int64_t done, int64_t total) {
                if (!tty) return;
                if (total > 0)
                    std::fprintf(stderr, "\r%s: %lld / %lld examples (%.0f %%)", name, static_cast<long long>(done),
                                 static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total));
                else
                    std::fprintf(stderr, "\r%s: %lld examples", name, static_cast<long long>(done));
                std::fflush(stderr);
            };
            const engine::ConvertResult r = engine::convertData(o, progress);
            if (tty) std::fprintf(stderr, "\n");
            std::printf("%s: %lld examples -> %zu %s, %.1f MB in %.1f s\n", name, static_cast<long long>(r.examples),
                        o.to == "tfrecord" ? r.files.size() : static_cast<size_t>(r.examples),
                        o.to == "tfrecord" ? "TFRecord shard(s)" : "files", static_cast<double>(r.bytes_written) / 1e6,
                        r.seconds);
            if (o.to == "tfrecord")
                std::printf("  %s ... %s\n", r.files.front().c_str(), r.files.back().c_str());
            else
                std::printf("  %s/\n", r.files.front().c_str());
        }
    } catch (const engine::DataError& e) {
        if (tty) std::fprintf(stderr, "\n");
        std::fprintf(stderr, "convert: %s\n", e.what());
        return kExitRunFailed;  // the input could not be read or the output not written
    } catch (const std::exception& e) {
        if (tty) std::fprintf(stderr, "\n");
        std::fprintf(stderr, "convert: %s\n", e.what());
        return kExitUsage;
    }
    return kExitOk;
}

}  // namespace trainbench::cli
