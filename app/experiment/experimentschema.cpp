#include "app/experiment/experimentschema.h"

#include <charconv>
#include <optional>
#include <type_traits>
#include <utility>

#include "app/experiment/experiment.h"
#include "app/experiment/issuelist.h"
#include "app/experiment/suggest.h"
#include "engine/emulation/devicecatalog.h"
#include "engine/emulation/tpuslice.h"

namespace trainbench::app {
namespace {

// strategy.stage_boundaries: "2" or "2, 4": layer indices, each 0..65535; nullopt for anything else.
std::optional<std::vector<int>> parseStageBoundaries(const std::string& text) {
    std::vector<int> out;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = std::min(text.find(',', at), text.size());
        std::string item = text.substr(at, comma - at);
        const size_t a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
        if (a == std::string::npos) return std::nullopt;
        item = item.substr(a, b - a + 1);
        if (item.empty() || item.size() > 5 || item.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
        const int v = std::stoi(item);
        if (v > 65535) return std::nullopt;
        out.push_back(v);
        at = comma + 1;
    }
    return out;
}

using nlohmann::json;
using engine::LayerSpec;

struct Range {
    std::optional<double> min, max;
    bool exMin = false, exMax = false;
    static Range ge(double v) { Range r; r.min = v; return r; }
    static Range gt(double v) { Range r; r.min = v; r.exMin = true; return r; }
    Range le(double v) const { Range r = *this; r.max = v; return r; }
    Range lt(double v) const { Range r = *this; r.max = v; r.exMax = true; return r; }
};

// The engine's float defaults as the decimal a user would write (1e-3f -> 0.001, not 0.0010000000474974513).
double shortest(float value) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    double out = 0;
    std::from_chars(buf, end, out);
    return out;
}

SchemaKey base(std::string key, SchemaType type, json defaultValue, std::string description) {
    SchemaKey k;
    k.key = std::move(key);
    k.type = type;
    k.defaultValue = std::move(defaultValue);
    k.description = std::move(description);
    return k;
}

SchemaKey withRange(SchemaKey k, const Range& r) {
    k.minimum = r.min;
    k.maximum = r.max;
    k.exclusiveMinimum = r.exMin;
    k.exclusiveMaximum = r.exMax;
    return k;
}

SchemaKey text(std::string key, json def, std::string description, SchemaKey::Store store) {
    SchemaKey k = base(std::move(key), SchemaType::String, std::move(def), std::move(description));
    k.nonEmpty = true;
    k.store = std::move(store);
    return k;
}

SchemaKey path(std::string key, json def, std::string description, SchemaKey::Store store) {
    SchemaKey k = text(std::move(key), std::move(def), std::move(description), std::move(store));
    k.type = SchemaType::Path;
    return k;
}

SchemaKey flag(std::string key, bool def, std::string description, SchemaKey::Store store) {
    SchemaKey k = base(std::move(key), SchemaType::Boolean, def, std::move(description));
    k.store = std::move(store);
    return k;
}

SchemaKey integer(std::string key, json def, Range r, std::string description, SchemaKey::Store store) {
    SchemaKey k = withRange(base(std::move(key), SchemaType::Integer, std::move(def), std::move(description)), r);
    k.store = std::move(store);
    return k;
}

SchemaKey number(std::string key, float def, Range r, std::string description, SchemaKey::Store store) {
    SchemaKey k = withRange(base(std::move(key), SchemaType::Number, shortest(def), std::move(description)), r);
    k.store = std::move(store);
    return k;
}

SchemaKey choice(std::string key, json def, std::vector<std::string> choices, std::string description,
                 SchemaKey::Store store) {
    SchemaKey k = base(std::move(key), SchemaType::Enum, std::move(def), std::move(description));
    k.choices = std::move(choices);
    k.store = std::move(store);
    return k;
}

SchemaKey section(std::string key, std::string description, std::vector<SchemaKey> keys) {
    SchemaKey k = base(std::move(key), SchemaType::Object, nullptr, std::move(description));
    k.keys = std::move(keys);
    return k;
}

// A key of a layer type; `def` null plus required for keys without a sensible default.
SchemaKey layerKey(std::string key, SchemaType type, json def, Range r, std::string description,
                   SchemaKey::StoreLayer store) {
    SchemaKey k = withRange(base(std::move(key), type, std::move(def), std::move(description)), r);
    k.required = k.defaultValue.is_null();
    k.storeLayer = std::move(store);
    return k;
}

// Setters from a validated JSON value into one field of one section of Experiment.
template <class Section, class Field>
SchemaKey::Store to(Section Experiment::*sectionMember, Field Section::*field) {
    return [sectionMember, field](const json& v, Experiment& out) { (out.*sectionMember).*field = v.get<Field>(); };
}

template <class Field>
SchemaKey::StoreLayer toLayer(Field LayerSpec::*field) {
    return [field](const json& v, LayerSpec& out) { out.*field = v.get<Field>(); };
}

// Batch norm's keys (Keras' names and defaults), for batch_norm and the bottleneck's batch norms.
SchemaKey batchNormMomentum() {
    return layerKey("momentum", SchemaType::Number, shortest(LayerSpec{}.momentum), Range::ge(0).le(1),
                    "Running statistics: running = momentum * running + (1 - momentum) * batch statistic.",
                    toLayer(&LayerSpec::momentum));
}
SchemaKey batchNormEpsilon() {
    return layerKey("epsilon", SchemaType::Number, shortest(LayerSpec{}.epsilon), Range::gt(0).le(1),
                    "Added to the variance before its square root.", toLayer(&LayerSpec::epsilon));
}

std::vector<LayerType> layerTypes() {
    using engine::LayerKind;
    const Range spatial = Range::ge(1).le(64);
    return {
        {"dense", LayerKind::Dense, "Fully connected layer; expects a flat input (put a flatten layer before the first dense layer).",
         {layerKey("units", SchemaType::Integer, nullptr, Range::ge(1).le(65536), "Output features.", toLayer(&LayerSpec::units)),
          layerKey("bias", SchemaType::Boolean, true, {}, "Add a learned bias.", toLayer(&LayerSpec::bias))}},
        {"conv2d", LayerKind::Conv2D, "2-D convolution with a square kernel.",
         {layerKey("filters", SchemaType::Integer, nullptr, Range::ge(1).le(4096), "Output channels.", toLayer(&LayerSpec::filters)),
          layerKey("kernel", SchemaType::Integer, 3, spatial, "Kernel height and width.", toLayer(&LayerSpec::kernel)),
          layerKey("stride", SchemaType::Integer, 1, spatial, "Step between kernel positions.", toLayer(&LayerSpec::stride)),
          layerKey("padding", SchemaType::Integer, 0, Range::ge(0).le(64), "Zeros added on each side (0 = valid).", toLayer(&LayerSpec::padding)),
          layerKey("bias", SchemaType::Boolean, true, {}, "Add a learned bias per filter.", toLayer(&LayerSpec::bias))}},
        {"maxpool2d", LayerKind::MaxPool2D, "Max pooling over square windows.",
         {layerKey("size", SchemaType::Integer, 2, spatial, "Window height and width.", toLayer(&LayerSpec::kernel)),
          [&] {
              SchemaKey k = layerKey("stride", SchemaType::Integer, nullptr, spatial, "Step between windows.",
                                     toLayer(&LayerSpec::stride));
              k.required = false;
              k.defaultFrom = "size";
              return k;
          }(),
          layerKey("padding", SchemaType::Integer, 0, Range::ge(0).le(32),
                   "Cells added on each side, never the maximum; at most half the window (ResNet's stem: size 3, "
                   "stride 2, padding 1).",
                   toLayer(&LayerSpec::padding))}},
        {"relu", LayerKind::ReLU, "max(0, x), element-wise.", {}},
        {"flatten", LayerKind::Flatten, "[batch, c, h, w] -> [batch, c*h*w]; needed before the first dense layer.", {}},
        {"dropout", LayerKind::Dropout, "Zeroes activations with probability rate while training.",
         {layerKey("rate", SchemaType::Number, nullptr, Range::ge(0).lt(1), "Probability of dropping an activation.",
                   toLayer(&LayerSpec::rate))}},
        {"batch_norm", LayerKind::BatchNorm,
         "Batch normalization per channel (per feature after a dense layer), with a learned scale and shift; "
         "evaluation uses the running statistics.",
         {batchNormMomentum(), batchNormEpsilon()}},
        {"global_avg_pool", LayerKind::GlobalAvgPool,
         "[batch, c, h, w] -> [batch, c]: the mean of each channel (ResNet's head).", {}},
        {"bottleneck", LayerKind::Bottleneck,
         "ResNet's bottleneck residual block: conv 1x1, 3x3 (with the stride), 1x1 (4 x filters channels), each "
         "followed by batch norm, plus a shortcut, then ReLU.",
         {layerKey("filters", SchemaType::Integer, nullptr, Range::ge(1).le(4096),
                   "Bottleneck width; the block outputs 4 x filters channels.", toLayer(&LayerSpec::filters)),
          layerKey("stride", SchemaType::Integer, 1, Range::ge(1).le(8),
                   "Stride of the 3x3 convolution (and of the shortcut's projection): 2 halves the image.",
                   toLayer(&LayerSpec::stride)),
          batchNormMomentum(), batchNormEpsilon()}},
    };
}

// Layers that need an image [channels, height, width] cannot come after one that made the data
// flat: no input fits such a list, so it is refused before anything runs. And a pooling window must
// overlap the image whatever its size: padding at most half the window.
void checkLayerOrder(const json& model, const std::string& where, IssueList& issues) {
    const auto layers = model.find("layers");
    if (layers == model.end()) return;
    std::optional<std::size_t> flatAt;
    for (std::size_t i = 0; i < layers->size(); ++i) {
        const json& layer = (*layers)[i];
        const std::string type = layer.at("type").get<std::string>();
        const std::string at = where + ".layers[" + std::to_string(i) + "]";
        const bool needsImage = type == "conv2d" || type == "maxpool2d" || type == "bottleneck" || type == "global_avg_pool";
        if (needsImage && flatAt) {
            issues.add(at, "a " + type + " layer needs an image [channels, height, width], but layer " +
                               std::to_string(*flatAt) + " (" + (*layers)[*flatAt].at("type").get<std::string>() +
                               ") has made the data flat; put image layers before flatten, dense and global_avg_pool");
            return;
        }
        if (!flatAt && (type == "flatten" || type == "dense" || type == "global_avg_pool")) flatAt = i;
        if (type == "maxpool2d" && 2 * layer.at("padding").get<int>() > layer.at("size").get<int>())
            issues.add(at + ".padding", "must be at most half the window (size " + layer.at("size").dump() +
                                            "), got " + layer.at("padding").dump());
    }
}

SchemaKey modelSection() {
    SchemaKey preset = choice("preset", nullptr, engine::presetNames(),
                              "A ready model: logreg (flatten, dense 10), mlp (benchmark W1), cnn (benchmark W2), "
                              "resnet_small (a small residual network for 28x28 images), resnet50 (ResNet-50, "
                              "25.6 M parameters at 1000 classes).",
                              [](const json& v, Experiment& out) {
                                  out.model.preset = v.get<std::string>();
                                  out.model.layers = engine::presetLayers(out.model.preset);
                              });
    SchemaKey layers = base("layers", SchemaType::Layers, nullptr, "Custom model: layers applied in order to the image.");
    layers.layerTypes = layerTypes();
    SchemaKey onnx = path("onnx", nullptr,
                          "An ONNX model of your own (docs/onnx.md): estimate, plan-serving, predict and serve take it; "
                          "run trains it from its own weights when every node has a backward in the engine.",
                          [](const json& v, Experiment& out) {
                              out.model.onnx = v.get<std::string>();
                              out.model.preset.clear();
                              out.model.layers.clear();
                          });
    SchemaKey model = section("model", "What is trained. Give exactly one of preset, layers and onnx.", {preset, layers, onnx});
    model.required = true;
    model.oneOf = {"preset", "layers", "onnx"};
    model.checks.push_back(checkLayerOrder);
    return model;
}

// Rules across the strategy, device, data and train sections for emulated devices and TPU slices.
void checkEmulatedDevice(const json& x, const std::string&, IssueList& issues) {
    const json& st = x["strategy"];
    const json& dev = x["device"];
    const std::string type = st["type"].get<std::string>();
    const std::string device = dev["type"].get<std::string>();
    const bool tpu = device.rfind("tpu-", 0) == 0;
    if (st.contains("slice") && type != "tpu_pod")
        issues.add("strategy.slice", "is set but strategy.type is \"" + type + "\"; only 'tpu_pod' runs on a slice");
    if (type == "tpu_pod") {
        if (!tpu) issues.add("device.type", "is \"" + device + "\" but strategy.type 'tpu_pod' needs a TPU ('tpu-v2', 'tpu-v3', 'tpu-v4')");
        if (!st.contains("slice")) {
            issues.add("strategy.slice", "missing; 'tpu_pod' needs a slice, e.g. \"v3-32\"");
            return;
        }
        if (st["replicas"].get<int64_t>() != 1)
            issues.add("strategy.replicas", "is " + st["replicas"].dump() + " but 'tpu_pod' takes its replicas from strategy.slice");
        engine::TpuSlice slice;
        try {
            slice = engine::parseTpuSlice(st["slice"].get<std::string>());
        } catch (const std::invalid_argument& e) {
            issues.add("strategy.slice", e.what());
            return;
        }
        if (tpu && device != "tpu-v" + std::to_string(slice.generation))
            issues.add("strategy.slice", "is \"" + slice.name + "\", a TPU v" + std::to_string(slice.generation) +
                                             " slice, but device.type is \"" + device + "\"");
        const engine::DeviceSpec* spec = engine::DeviceCatalog::builtin().find(device);
        const int64_t replicas = spec && spec->tpu && spec->tpu->replica_is_chip ? slice.chips() : slice.cores;
        const int64_t batch = x["train"]["batch_size"].get<int64_t>();
        const int64_t global = st["batch_scope"] == "per_replica" ? batch * replicas : batch;
        if (global % replicas != 0)
            issues.add("train.batch_size", "is " + std::to_string(batch) + ": a global batch of " + std::to_string(global) +
                                               " does not split evenly over the " + std::to_string(replicas) +
                                               " replicas of " + slice.name + " (TPUs need static shapes)");
    } else if (device != "cpu" && type == "multi_worker") {
        // Every worker's device gets the same share of every batch (static shapes).
        const int64_t batch = x["train"]["batch_size"].get<int64_t>(), workers = st["replicas"].get<int64_t>();
        if (st["batch_scope"] != "per_replica" && batch % workers != 0)
            issues.add("train.batch_size", "is " + std::to_string(batch) + ": it does not split evenly over the " +
                                               std::to_string(workers) + " workers' emulated devices (static shapes)");
    }
    if (tpu && (type == "mirrored" || type == "multi_worker" || type == "parameter_server"))
        issues.add("strategy.type", "is '" + type + "' but device.type is a TPU: TPUs train with 'tpu_pod' and a slice");
    if (tpu && x["data"]["drop_remainder"] != true)
        issues.add("data.drop_remainder", "must be true on a TPU: the MXUs need static shapes (every batch the same size)");
    else if (device != "cpu" && (type == "mirrored" || type == "multi_worker") && x["data"]["drop_remainder"] != true)
        issues.add("data.drop_remainder", "must be true for '" + type + "' on an emulated device: every replica gets the "
                                          "same share of every batch (static shapes)");
    // The hosts' network and the servers' memory are the virtual clock's, for jobs of processes on
    // emulated devices: anywhere else they would change nothing, which a user would not expect.
    struct HostKey {
        const char* key;
        double defaultValue;
        bool serversOnly;
    };
    const DeviceConfig defaults{};
    const bool job = device != "cpu" && (type == "multi_worker" || type == "parameter_server");
    for (const HostKey& k : {HostKey{"network_gbps", defaults.network_gbps, false},
                             HostKey{"network_latency_us", defaults.network_latency_us, false},
                             HostKey{"ps_memory_gbs", defaults.ps_memory_gbs, true}}) {
        const bool applies = job && (type == "parameter_server" || !k.serversOnly);
        if (!applies && dev[k.key].get<double>() != k.defaultValue)
            issues.add(std::string("device.") + k.key,
                       "is " + dev[k.key].dump() + " but only " +
                           (k.serversOnly ? "'parameter_server'" : "'multi_worker' and 'parameter_server'") +
                           " on an emulated device use it (strategy.type is '" + type + "', device.type '" + device + "')");
    }
}

// train.warm_start: where a run's initial parameters come from, when not from its seed.
SchemaKey warmStartSection() {
    SchemaKey run = integer("run", nullptr, Range::ge(1),
                            "Start from the checkpoint of this run of the same run store (its run attribute "
                            "checkpoint.path: the run saved one with checkpoint_every_steps or checkpoint_at_end).",
                            to(&Experiment::warm_start, &WarmStartConfig::run));
    SchemaKey checkpoint = path("checkpoint", nullptr, "Start from this checkpoint file.",
                                to(&Experiment::warm_start, &WarmStartConfig::checkpoint));
    SchemaKey optimizer = choice("optimizer", "fresh", {"fresh", "carry"},
                                 "fresh: a new optimizer, warm-up and bias correction from step 1 (fine-tuning). carry: "
                                 "the checkpoint's optimizer state and its count of updates too.",
                                 [](const json& v, Experiment& out) { out.warm_start.carry_optimizer = v == "carry"; });
    SchemaKey s = section("warm_start",
                          "Start from another run's parameters and batch norm statistics instead of random ones; "
                          "give run or checkpoint, not both (neither: train from scratch).",
                          {run, checkpoint, optimizer});
    s.checks.push_back([](const json& v, const std::string& where, IssueList& issues) {
        if (v.contains("run") && v.contains("checkpoint"))
            issues.add(where, "give only one of 'run', 'checkpoint', not both");
    });
    return s;
}

SchemaKey buildSchema() {
    using engine::DataConfig;
    using engine::OptimizerConfig;
    using engine::TrainConfig;
    const DataConfig d{};
    const OptimizerConfig o{};
    const TrainConfig t{};

    SchemaKey name = text("name", nullptr, "Name shown in run lists and reports.",
                          [](const json& v, Experiment& out) { out.name = v.get<std::string>(); });
    name.defaultNote = "file name without .json";
    SchemaKey description = text("description", "", "Free text about what the experiment is for.",
                                 [](const json& v, Experiment& out) { out.description = v.get<std::string>(); });
    description.nonEmpty = false;

    using engine::PipelineConfig;
    using engine::StorageConfig;
    const PipelineConfig pc{};
    const engine::CsvOptions co{};
    // Setters for the nested data.pipeline / data.storage / data.csv sections.
    auto pipe = [](auto PipelineConfig::*field) -> SchemaKey::Store {
        return [field](const json& v, Experiment& out) {
            out.data.pipeline.*field = v.get<std::remove_reference_t<decltype(out.data.pipeline.*field)>>();
        };
    };
    auto store = [](auto StorageConfig::*field) -> SchemaKey::Store {
        return [field](const json& v, Experiment& out) {
            out.data.storage.*field = v.get<std::remove_reference_t<decltype(out.data.storage.*field)>>();
        };
    };
    // Storage numbers default to the preset's value: no default here, the preset fills them in.
    auto storageNumber = [&](std::string key, Range r, std::string meaning, SchemaKey::Store st) {
        SchemaKey k = withRange(base(std::move(key), SchemaType::Number, nullptr, std::move(meaning)), r);
        k.defaultNote = "the preset's";
        k.store = std::move(st);
        return k;
    };
    SchemaKey storageSection = section("storage",
        "Emulated storage under every file read: adds bandwidth limits and latencies to the real reads.", {
        choice("preset", "local", engine::storagePresetNames(),
               "Starting values: local (no emulation), ssd, hdd, cloud (object store: 100 MB/s per stream, "
               "1000 MB/s in all, 20 ms per open, 10 ms per request). The keys below override them.",
               [](const json& v, Experiment& out) {
                   out.data.storage = engine::storagePreset(v.get<std::string>());
               }),
        storageNumber("bandwidth_mb_s", Range::ge(0), "All open files together, MB/s (0 = unlimited).",
                      store(&StorageConfig::bandwidth_mb_s)),
        storageNumber("stream_bandwidth_mb_s", Range::ge(0), "Each open file on its own, MB/s (0 = unlimited).",
                      store(&StorageConfig::stream_bandwidth_mb_s)),
        storageNumber("open_latency_ms", Range::ge(0).le(60000), "Charged on every file open, ms.",
                      store(&StorageConfig::open_latency_ms)),
        storageNumber("request_latency_ms", Range::ge(0).le(60000), "Charged on every read request, ms.",
                      store(&StorageConfig::request_latency_ms)),
        [&] {
            SchemaKey k = withRange(base("request_bytes", SchemaType::Integer, nullptr,
                                         "Largest read request; longer reads are split (0 = no limit)."),
                                    Range::ge(0));
            k.defaultNote = "the preset's";
            k.store = store(&StorageConfig::request_bytes);
            return k;
        }(),
    });
    SchemaKey pipelineSection = section("pipeline",
        "The streaming input pipeline (non-IDX data sets): list files, interleave, cache, shuffle, map and "
        "batch (fused), prefetch.", {
        flag("shuffle_files", pc.shuffle_files, "Reorder the file list every epoch (seeded; needs data.shuffle).",
             pipe(&PipelineConfig::shuffle_files)),
        integer("cycle_length", pc.cycle_length, Range::ge(1).le(256), "Files read at once, one record from each in turn (interleave).",
                pipe(&PipelineConfig::cycle_length)),
        flag("parallel_reads", pc.parallel_reads, "Read each of the cycle_length files on its own thread.",
             pipe(&PipelineConfig::parallel_reads)),
        integer("map_parallel_calls", pc.map_parallel_calls, Range::ge(1).le(256), "Threads parsing and decoding records (1 = the pipeline's own thread).",
                pipe(&PipelineConfig::map_parallel_calls)),
        integer("shuffle_buffer", pc.shuffle_buffer, Range::ge(1), "Records held in the shuffle buffer (when data.shuffle).",
                pipe(&PipelineConfig::shuffle_buffer)),
        integer("prefetch", pc.prefetch, Range::ge(0).le(1024), "Batches made ahead on a background thread (0 = made when the trainer asks).",
                pipe(&PipelineConfig::prefetch)),
        flag("cache", pc.cache, "Keep the records in memory after the first epoch; later epochs read no files.", pipe(&PipelineConfig::cache)),
        integer("shard_count", pc.shard_count, Range::ge(1).le(65536), "Workers the data is split over; this one reads 1/shard_count.",
                pipe(&PipelineConfig::shard_count)),
        integer("shard_index", pc.shard_index, Range::ge(0), "This worker's shard, 0-based.", pipe(&PipelineConfig::shard_index)),
        choice("shard_by", std::string(engine::shardByName(pc.shard_by)), {"file", "element"}, "Shard whole files (reads 1/N of the bytes) or every Nth record (reads all).",
               [](const json& v, Experiment& out) {
                   out.data.pipeline.shard_by = *engine::parseShardBy(v.get<std::string>());  // a choice: validated
               }),
        flag("autotune", pc.autotune, "Measure and choose cycle_length, parallel_reads, map_parallel_calls and prefetch "
             "(the values given are then ignored); the choice is recorded with the run.", pipe(&PipelineConfig::autotune)),
        flag("skip_corrupt", pc.skip_corrupt, "Skip corrupt records and count them, instead of failing the run.",
             pipe(&PipelineConfig::skip_corrupt)),
        choice("compression", pc.compression, {"none", "zlib"}, "TFRecord files: TensorFlow's compression_type \"\" or \"ZLIB\".",
               pipe(&PipelineConfig::compression)),
    });
    pipelineSection.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["shard_index"].get<int64_t>() >= s["shard_count"].get<int64_t>())
            issues.add(where + ".shard_index", "must be < shard_count (" + s["shard_count"].dump() + "), got " +
                                                   s["shard_index"].dump());
    });
    SchemaKey csvSection = section("csv", "CSV sources: numeric columns plus one integer label column.", {
        text("delimiter", std::string(1, co.delimiter), "Field separator, one character.",
             [](const json& v, Experiment& out) { out.data.csv.delimiter = v.get<std::string>()[0]; }),
        choice("header", co.header, {"auto", "yes", "no"}, "Whether the first line names the columns (auto: if any field is not a number).",
               [](const json& v, Experiment& out) { out.data.csv.header = v.get<std::string>(); }),
        [&] {
            SchemaKey k = text("label_column", "", "The label column: its header name or 0-based index (empty = the last column).",
                               [](const json& v, Experiment& out) { out.data.csv.label_column = v.get<std::string>(); });
            k.nonEmpty = false;
            return k;
        }(),
    });
    csvSection.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["delimiter"].get<std::string>().size() != 1)
            issues.add(where + ".delimiter", "must be exactly one character, got " + s["delimiter"].dump());
    });
    auto optionalPath = [&](std::string key, std::string meaning, SchemaKey::Store st) {
        SchemaKey k = base(std::move(key), SchemaType::Path, nullptr, std::move(meaning));
        k.nonEmpty = true;
        k.defaultNote = "none (required for streaming data sets)";
        k.store = std::move(st);
        return k;
    };

    SchemaKey data = section("data", "Where the training and test data come from and how batches are made.", {
        choice("dataset", d.dataset, {"fashion-mnist", "idx", "tfrecord", "csv", "images", "example_files", "shape"},
               "Data set format. 'fashion-mnist'/'idx': IDX files in path, held in memory. Streaming through the "
               "pipeline: 'tfrecord' (TFRecord shards of tf.train.Example), 'csv', 'images' (a folder with one "
               "sub-folder per class, PNG or JPEG), 'example_files' (one serialized tf.train.Example per file). "
               "'shape': no data, only its shape (data.shape), for trainbench-cli estimate.",
               to(&Experiment::data, &DataConfig::dataset)),
        optionalPath("train_files", "Streaming data sets: the training files, as a folder, a glob (\"shards/train-*.tfrecord\") or one file.",
                     to(&Experiment::data, &DataConfig::train_files)),
        optionalPath("test_files", "Streaming data sets: the test files, read once into memory for evaluation.",
                     to(&Experiment::data, &DataConfig::test_files)),
        integer("channels", d.channels, Range::ge(1).le(3), "Image folders: 1 = grey, 3 = RGB (images are converted).",
                [](const json& v, Experiment& out) { out.data.channels = v.get<int>(); }),
        integer("num_classes", d.num_classes, Range::ge(0).le(65536), "Classes (0 = one more than the largest test label).",
                to(&Experiment::data, &DataConfig::num_classes)),
        path("path", d.path, "Folder holding the IDX files (plain or .gz). Relative to the experiment file's folder.",
             to(&Experiment::data, &DataConfig::path)),
        text("train_images", d.train_images, "Training images file in path (\".gz\" is tried too).",
             to(&Experiment::data, &DataConfig::train_images)),
        text("train_labels", d.train_labels, "Training labels file.", to(&Experiment::data, &DataConfig::train_labels)),
        text("test_images", d.test_images, "Test images file.", to(&Experiment::data, &DataConfig::test_images)),
        text("test_labels", d.test_labels, "Test labels file.", to(&Experiment::data, &DataConfig::test_labels)),
        integer("train_limit", d.train_limit, Range::ge(0), "Use only the first N training examples (0 = all).",
                to(&Experiment::data, &DataConfig::train_limit)),
        integer("test_limit", d.test_limit, Range::ge(0), "Use only the first N test examples (0 = all).",
                to(&Experiment::data, &DataConfig::test_limit)),
        number("fraction", 1.0f, Range::gt(0).le(1),
               "Train on this fraction of the training set: round(fraction x N) examples, the same for every seed, "
               "each fraction's examples inside a larger one's, classes kept in proportion. The test set is never cut.",
               [](const json& v, Experiment& out) { out.data.fraction = v.get<double>(); }),
        integer("subset_seed", 0, Range::ge(0), "Which examples data.fraction keeps; independent of seed.",
                [](const json& v, Experiment& out) { out.data.subset_seed = v.get<uint64_t>(); }),
        flag("shuffle", d.shuffle, "Reshuffle the training set every epoch (seeded by seed).",
             to(&Experiment::data, &DataConfig::shuffle)),
        flag("drop_remainder", d.drop_remainder, "Drop the last, smaller batch of each epoch (static shapes).",
             to(&Experiment::data, &DataConfig::drop_remainder)),
        csvSection,
        pipelineSection,
        storageSection,
        section("shape", "dataset 'shape': a data set described by its shape alone, to estimate a model on it "
                         "(trainbench-cli estimate) without the data.", {
            integer("sequence", 0, Range::ge(0).le(65536),
                    "Token ids per example, for a model that reads ids (a transformer's): an example is [sequence] ids "
                    "and channels, height and width are not used. 0: an example is an image.",
                    [](const json& v, Experiment& out) { out.data.shape.sequence = v.get<int64_t>(); }),
            integer("channels", 3, Range::ge(1).le(4096), "Channels of an example.",
                    [](const json& v, Experiment& out) { out.data.shape.channels = v.get<int64_t>(); }),
            integer("height", 224, Range::ge(1).le(65536), "Height of an example.",
                    [](const json& v, Experiment& out) { out.data.shape.height = v.get<int64_t>(); }),
            integer("width", 224, Range::ge(1).le(65536), "Width of an example.",
                    [](const json& v, Experiment& out) { out.data.shape.width = v.get<int64_t>(); }),
            integer("classes", 1000, Range::ge(2).le(1000000), "Classes.",
                    [](const json& v, Experiment& out) { out.data.shape.classes = v.get<int64_t>(); }),
            integer("train_examples", 1281167, Range::ge(1), "Training examples (an epoch).",
                    [](const json& v, Experiment& out) { out.data.shape.train_examples = v.get<int64_t>(); }),
        }),
    });
    data.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        const std::string ds = s["dataset"].get<std::string>();
        if (ds == "fashion-mnist" || ds == "idx" || ds == "shape") return;
        for (const char* key : {"train_files", "test_files"})
            if (!s.contains(key)) issues.add(where + "." + key, std::string("missing; dataset '") + ds + "' reads its data from files");
    });

    SchemaKey optimizer = section("optimizer", "How the weights are updated from the gradients.", {
        choice("type", o.kind == engine::OptimizerKind::Adam ? "adam" : "sgd", {"adam", "sgd"},
               "Adam, or SGD with optional (Nesterov) momentum.",
               [](const json& v, Experiment& out) {
                   out.optimizer.kind = v.get<std::string>() == "sgd" ? engine::OptimizerKind::SGD : engine::OptimizerKind::Adam;
               }),
        number("learning_rate", o.learning_rate, Range::gt(0).le(10), "Step size (after warm-up).",
               to(&Experiment::optimizer, &OptimizerConfig::learning_rate)),
        number("momentum", o.momentum, Range::ge(0).lt(1), "SGD only: momentum factor (0 = plain SGD).",
               to(&Experiment::optimizer, &OptimizerConfig::momentum)),
        flag("nesterov", o.nesterov, "SGD only: Nesterov momentum (needs momentum > 0).",
             to(&Experiment::optimizer, &OptimizerConfig::nesterov)),
        number("weight_decay", o.weight_decay, Range::ge(0).le(1), "L2 penalty added to the gradient (SGD and Adam).",
               to(&Experiment::optimizer, &OptimizerConfig::weight_decay)),
        number("beta1", o.beta1, Range::ge(0).lt(1), "Adam only: decay of the first-moment estimate.",
               to(&Experiment::optimizer, &OptimizerConfig::beta1)),
        number("beta2", o.beta2, Range::ge(0).lt(1), "Adam only: decay of the second-moment estimate.",
               to(&Experiment::optimizer, &OptimizerConfig::beta2)),
        number("epsilon", o.epsilon, Range::gt(0).le(1), "Adam only: added to the denominator (Keras 1e-7, PyTorch 1e-8).",
               to(&Experiment::optimizer, &OptimizerConfig::epsilon)),
        integer("warmup_steps", o.warmup_steps, Range::ge(0), "Raise the learning rate linearly from 0 over this many steps.",
                to(&Experiment::optimizer, &OptimizerConfig::warmup_steps)),
    });
    optimizer.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["type"] == "sgd" && s["nesterov"] == true && s["momentum"].get<double>() == 0)
            issues.add(where + ".nesterov", "Nesterov momentum needs optimizer.momentum > 0 (it is 0)");
    });

    SchemaKey train = section("train", "How long to train, how often to evaluate, and on how many threads.", {
        integer("batch_size", t.batch_size, Range::ge(1).le(65536), "Examples per training step.",
                to(&Experiment::train, &TrainConfig::batch_size)),
        integer("epochs", t.epochs, Range::ge(0), "Stop after this many passes over the training set (0 = no epoch limit).",
                to(&Experiment::train, &TrainConfig::epochs)),
        integer("max_steps", t.max_steps, Range::ge(0), "Stop after this many steps (0 = no step limit).",
                to(&Experiment::train, &TrainConfig::max_steps)),
        integer("eval_every_steps", t.eval_every_steps, Range::ge(0), "Evaluate on the test set every N steps (0 = never mid-epoch).",
                to(&Experiment::train, &TrainConfig::eval_every_steps)),
        flag("eval_at_epoch_end", t.eval_at_epoch_end, "Evaluate on the test set after every epoch.",
             to(&Experiment::train, &TrainConfig::eval_at_epoch_end)),
        number("target_accuracy", static_cast<float>(t.target_accuracy), Range::ge(0).le(1),
               "Record time-to-accuracy when test accuracy first reaches this (0 = no target).",
               to(&Experiment::train, &TrainConfig::target_accuracy)),
        flag("stop_at_target", t.stop_at_target, "End the run as soon as target_accuracy is reached.",
             to(&Experiment::train, &TrainConfig::stop_at_target)),
        integer("threads", t.threads, Range::ge(0).le(1024), "Compute threads (0 = all cores).",
                to(&Experiment::train, &TrainConfig::threads)),
        integer("checkpoint_every_steps", t.checkpoint_every_steps, Range::ge(0),
                "Save the parameters and optimizer state every N steps (0 = never); a failed multi_worker job "
                "restarts from the last one.",
                to(&Experiment::train, &TrainConfig::checkpoint_every_steps)),
        [] {
            SchemaKey k = base("checkpoint_path", SchemaType::Path, nullptr,
                               "Checkpoint file, replaced atomically at every checkpoint.");
            k.nonEmpty = true;
            k.defaultNote = "checkpoints/run-<id>.ckpt next to the run store";
            k.store = to(&Experiment::train, &TrainConfig::checkpoint_path);
            return k;
        }(),
        flag("checkpoint_at_end", t.checkpoint_at_end,
             "Save a checkpoint when the run ends too (to checkpoint_path), for other runs to warm-start from.",
             to(&Experiment::train, &TrainConfig::checkpoint_at_end)),
        warmStartSection(),
    });
    train.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["epochs"] == 0 && s["max_steps"] == 0)
            issues.add(where, "at least one of 'epochs' and 'max_steps' must be > 0 (both are 0, so the run would never end)");
        if (s["stop_at_target"] == true && s["target_accuracy"].get<double>() == 0)
            issues.add(where + ".stop_at_target", "needs train.target_accuracy > 0 (it is 0, so there is no target to stop at)");
    });

    const engine::StrategyConfig sc{};
    SchemaKey strategy = section("strategy", "How training is spread over devices (tf.distribute's strategies).", {
        choice("type", std::string(engine::strategyKindName(sc.type)), engine::strategyKindNames(),
               "single: one device; mirrored: replicas in this process; multi_worker: one replica per process "
               "(Gloo); both synchronous all-reduce. parameter_server: asynchronous workers pushing to "
               "parameter servers. tpu_pod: synchronous data parallelism over the cores of an emulated TPU "
               "slice (strategy.slice).",
               [](const json& v, Experiment& out) {
                   out.strategy.type = *engine::parseStrategyKind(v.get<std::string>());  // a choice: validated
               }),
        integer("replicas", sc.replicas, Range::ge(1).le(64),
                "mirrored: replicas in this process; multi_worker, parameter_server: worker processes (a TF_CONFIG, "
                "when given, decides).",
                to(&Experiment::strategy, &engine::StrategyConfig::replicas)),
        integer("threads_per_replica", sc.threads_per_replica, Range::ge(0).le(1024),
                "Compute threads of each replica (0 = train.threads, or all cores, split evenly).",
                to(&Experiment::strategy, &engine::StrategyConfig::threads_per_replica)),
        choice("batch_scope", std::string(engine::batchScopeName(sc.batch_scope)), {"global", "per_replica"},
               "Whether train.batch_size is the global batch (split over replicas) or each replica's "
               "(global batch = batch_size x replicas).",
               [](const json& v, Experiment& out) {
                   out.strategy.batch_scope = *engine::parseBatchScope(v.get<std::string>());  // a choice: validated
               }),
        number("bucket_mb", static_cast<float>(sc.bucket_mb), Range::ge(0).le(1024),
               "Gradients are all-reduced in buckets of at least this many MiB, last layers first (0 = one per layer).",
               [](const json& v, Experiment& out) { out.strategy.bucket_mb = v.get<double>(); }),
        flag("overlap", sc.overlap, "All-reduce each bucket while backward goes on (false: after backward).",
             to(&Experiment::strategy, &engine::StrategyConfig::overlap)),
        choice("collective", std::string(engine::collectiveBackendName(sc.collective)), {"gloo", "mpi"},
               "multi_worker: how the processes all-reduce. gloo: Gloo's ring over TCP, the tasks meeting through "
               "the chief's rendezvous store (TF_CONFIG). mpi: Open MPI, the processes started by mpirun "
               "(`trainbench-cli run` starts it; or mpirun / srun --mpi=pmix from a launch script): shared memory "
               "on one host.",
               [](const json& v, Experiment& out) {
                   out.strategy.collective = *engine::parseCollectiveBackend(v.get<std::string>());  // a choice: validated
               }),
        integer("stages", sc.stages, Range::ge(1).le(64),
                "pipeline: stages the model's layers are cut into, each a device of threads_per_replica threads.",
                to(&Experiment::strategy, &engine::StrategyConfig::stages)),
        integer("micro_batches", sc.micro_batches, Range::ge(1).le(4096),
                "pipeline: micro-batches the global batch is split into; the bubble is (stages-1)/(micro_batches+stages-1).",
                to(&Experiment::strategy, &engine::StrategyConfig::micro_batches)),
        choice("schedule", std::string(engine::pipelineScheduleName(sc.schedule)), {"gpipe", "1f1b"},
               "pipeline: gpipe (GPipe's fill-drain: all forwards, then all backwards) or 1f1b (PipeDream-Flush: "
               "one forward, one backward; the same bubble, a stage holds at most stages-k micro-batches).",
               [](const json& v, Experiment& out) {
                   out.strategy.schedule = *engine::parsePipelineSchedule(v.get<std::string>());  // a choice: validated
               }),
        text("stage_boundaries", nullptr,
             "pipeline: where stages 1.. begin, as comma-separated indices into the model's layer list in the "
             "order it runs (e.g. '2' or '2,4'); stages-1 of them. Default: balanced by estimated layer time.",
             [](const json& v, Experiment& out) {
                 out.strategy.stage_boundaries = *parseStageBoundaries(v.get<std::string>());  // checked below
             }),
        flag("recompute", sc.recompute,
             "pipeline: activation recomputation (gradient checkpointing): each stage keeps only its micro-batches' "
             "inputs and runs a micro-batch's forward again before its backward: one set of activations per stage "
             "instead of up to micro_batches, for about a third more compute.",
             to(&Experiment::strategy, &engine::StrategyConfig::recompute)),
        integer("tensor", sc.tensor, Range::ge(1).le(64),
                "tensor: devices each dense and convolution layer is split across (Megatron-style: by outputs, "
                "then the next layer by inputs, one all-reduce per pair), each of threads_per_replica threads.",
                to(&Experiment::strategy, &engine::StrategyConfig::tensor)),
        text("slice", nullptr,
             "tpu_pod: the TPU slice, e.g. 'v3-8', 'v3-32', ... 'v3-2048' (the number is TensorCores); its "
             "generation must match device.type.",
             to(&Experiment::strategy, &engine::StrategyConfig::slice)),
        integer("parameter_servers", sc.parameter_servers, Range::ge(1).le(64),
                "parameter_server: parameter-server processes the variables are sharded over (a TF_CONFIG, when "
                "given, decides).",
                to(&Experiment::strategy, &engine::StrategyConfig::parameter_servers)),
        integer("max_restarts", sc.max_restarts, Range::ge(0).le(100),
                "multi_worker, parameter_server: times a failed job is restarted from its last checkpoint before it fails.",
                to(&Experiment::strategy, &engine::StrategyConfig::max_restarts)),
        number("timeout_s", static_cast<float>(sc.timeout_s), Range::gt(0).le(86400),
               "multi_worker, parameter_server: a task silent this long is taken as lost (a dead connection is "
               "noticed at once).",
               [](const json& v, Experiment& out) { out.strategy.timeout_s = v.get<double>(); }),
    });
    strategy.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["type"] == "single" && s["replicas"].get<int64_t>() != 1)
            issues.add(where + ".replicas", "is " + s["replicas"].dump() +
                                                " but strategy.type is 'single' (one device); use 'mirrored', "
                                                "'multi_worker' or 'parameter_server' for replicas");
        if (s.contains("stage_boundaries")) {
            const auto b = parseStageBoundaries(s["stage_boundaries"].get<std::string>());
            if (!b)
                issues.add(where + ".stage_boundaries", "is " + s["stage_boundaries"].dump() +
                                                            ", not comma-separated layer indices such as \"2\" or \"2,4\"");
            else if (static_cast<int64_t>(b->size()) != s["stages"].get<int64_t>() - 1)
                issues.add(where + ".stage_boundaries", "names " + std::to_string(b->size()) + " boundaries but " +
                                                            s["stages"].dump() + " stages need " +
                                                            std::to_string(s["stages"].get<int64_t>() - 1));
        }
        if ((s["type"] == "pipeline" || s["type"] == "tensor") && s["replicas"].get<int64_t>() != 1)
            issues.add(where + ".replicas", "is " + s["replicas"].dump() + " but a " + s["type"].get<std::string>() +
                                                " run trains one replica here: data x pipeline x tensor layouts are "
                                                "planned (trainbench-cli plan-layouts), not trained yet");
        if (s["type"] != "tensor" && s["tensor"] != 2)
            issues.add(where + ".tensor", "is " + s["tensor"].dump() + " but strategy.type is " + s["type"].dump() +
                                              "; it is a 'tensor' key");
        if (s["type"] != "pipeline" && (s["stages"] != 2 || s["micro_batches"] != 4 || s.contains("stage_boundaries") ||
                                        s["recompute"] == true))
            issues.add(where + ".type", "is " + s["type"].dump() + " but stages, micro_batches, stage_boundaries or "
                                        "recompute are set; they are 'pipeline' keys");
        if (s["collective"] != "gloo" && s["type"] != "multi_worker")
            issues.add(where + ".collective", "is " + s["collective"].dump() + " but strategy.type is " +
                                                  s["type"].dump() + "; only 'multi_worker' exchanges gradients "
                                                  "between processes (mirrored's replicas share memory)");
        if (s["type"] != "parameter_server" && s["parameter_servers"].get<int64_t>() != 1)
            issues.add(where + ".parameter_servers", "is " + s["parameter_servers"].dump() +
                                                         " but strategy.type is " + s["type"].dump() +
                                                         "; only 'parameter_server' has parameter servers");
    });

    SchemaKey device = section("device", "The device the run stands for.", {
        text("type", "cpu",
             "'cpu': this host's CPU, timed on the wall clock. Or an emulated device from the device catalog "
             "(docs/devices.md: 'v100-sxm2-16gb', 'a100-sxm4-40gb', 'a100-sxm4-80gb', 'h100-sxm5-80gb', "
             "'tpu-v2', 'tpu-v3', 'tpu-v4', ...): the numerics run here, a virtual clock charges what that "
             "device would take.",
             [](const json& v, Experiment& out) { out.device.type = v.get<std::string>(); }),
        choice("precision", "auto", {"auto", "fp32", "tf32", "bf16"},
               "Matrix-product precision the virtual clock charges (auto: bf16 on TPUs, fp32 elsewhere). The "
               "numerics stay fp32.",
               [](const json& v, Experiment& out) { out.device.precision = v.get<std::string>(); }),
        path("catalog", nullptr, "A device catalog of your own instead of the built-in one (docs/devices.md).",
             [](const json& v, Experiment& out) { out.device.catalog = v.get<std::string>(); }),
        number("infeed_seconds_per_batch", 0.0f, Range::ge(0).le(3600),
               "Emulated devices: the host's time to make one global batch (multi_worker, parameter_server: a "
               "worker host's time to make its worker's batch; 0 = measure this host's input pipeline before "
               "training). Pin it to make virtual time independent of this host.",
               [](const json& v, Experiment& out) { out.device.infeed_seconds_per_batch = v.get<double>(); }),
        number("price_per_hour", -1.0f, Range::ge(-1).le(1e6),
               "USD per device-hour (a GPU, a TPU chip, or this host); -1 = the catalog's price.",
               [](const json& v, Experiment& out) { out.device.price_per_hour = v.get<double>(); }),
        number("memory_mb", 0.0f, Range::ge(0).le(16777216),
               "Device memory in MiB the run's footprint is checked against, to stand in for a smaller "
               "accelerator (0 = the host's RAM, or the emulated device's memory). A footprint of 90 % or more "
               "makes the run memory-bound (capacity).",
               [](const json& v, Experiment& out) { out.device.memory_mb = v.get<double>(); }),
        number("network_gbps", 100.0f, Range::ge(0.001).le(100000),
               "Emulated multi_worker, parameter_server: each worker's device is on a host of its own; the hosts' "
               "network link in Gbit/s, each direction (multi_worker all-reduces on a ring of them).",
               [](const json& v, Experiment& out) { out.device.network_gbps = v.get<double>(); }),
        number("network_latency_us", 10.0f, Range::ge(0).le(1e6),
               "Emulated multi_worker, parameter_server: latency of one message between hosts, microseconds.",
               [](const json& v, Experiment& out) { out.device.network_latency_us = v.get<double>(); }),
        number("ps_memory_gbs", 20.0f, Range::ge(0.001).le(100000),
               "Emulated parameter_server: the memory bandwidth (GB/s) at which a parameter server's CPU applies "
               "the optimizer's update to its shard of the variables.",
               [](const json& v, Experiment& out) { out.device.ps_memory_gbs = v.get<double>(); }),
    });
    device.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        const std::string type = s["type"].get<std::string>();
        if (type == "cpu" || s.contains("catalog")) return;  // a user catalog is checked when the run starts
        if (!engine::DeviceCatalog::builtin().find(type)) {
            std::string known;
            for (const std::string& id : engine::DeviceCatalog::builtin().ids()) known += (known.empty() ? "" : ", ") + id;
            issues.add(where + ".type", "is " + s["type"].dump() + ", not 'cpu' or a device of the catalog (" + known + ")");
        }
    });

    // Validated with the file (known keys, values in range) but not part of the resolved experiment:
    // every point of a sweep is its own run, recorded without the sweep (sweep.h).
    SchemaKey sweep = base("sweep", SchemaType::Sweep, nullptr,
                           "Runs one experiment per combination of values, e.g. {\"strategy.replicas\": [1, 2, 4]}: "
                           "key paths of the keys above, each with a non-empty list of values.");
    sweep.defaultNote = "none (one run)";

    SchemaKey root = section("", "An experiment file.", {
        name,
        description,
        integer("seed", t.seed, Range::ge(0), "Seeds initialisation, shuffling and dropout; same seed, same run.",
                to(&Experiment::train, &TrainConfig::seed)),
        data,
        modelSection(),
        optimizer,
        train,
        strategy,
        device,
        sweep,
    });
    root.checks.push_back(checkEmulatedDevice);
    return root;
}

}  // namespace

const SchemaKey& experimentSchema() {
    static const SchemaKey schema = buildSchema();
    return schema;
}

std::string unknownKeyMessage(const std::string& key, const std::vector<std::string>& known, const std::string& context) {
    const std::string head = context.empty() ? "unknown key" : "unknown key " + context;
    if (const auto match = closestMatch(key, known)) return head + "; did you mean '" + *match + "'?";
    // A right key in the wrong place ("train.learning_rate") deserves a better hint than a list.
    if (context.empty()) {
        for (const SchemaKey& top : experimentSchema().keys) {
            if (top.key == key) return head + "; '" + key + "' is a top-level key, not part of this section";
            if (top.type == SchemaType::Object && top.find(key))
                return head + "; did you mean '" + top.key + "." + key + "'? ('" + key + "' belongs in " + top.key + ")";
        }
    }
    if (known.empty()) return head + "; this takes no keys";
    return head + "; known keys: " + quotedList(known);
}

json experimentSchemaJson() {
    json out = experimentSchema().toJson();
    out.erase("key");
    return out;
}

}  // namespace trainbench::app
