#include "app/experiment/experimentschema.h"

#include <charconv>
#include <optional>
#include <utility>

#include "app/experiment/experiment.h"
#include "app/experiment/issuelist.h"
#include "app/experiment/suggest.h"

namespace trainbench::app {
namespace {

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
          }()}},
        {"relu", LayerKind::ReLU, "max(0, x), element-wise.", {}},
        {"flatten", LayerKind::Flatten, "[batch, c, h, w] -> [batch, c*h*w]; needed before the first dense layer.", {}},
        {"dropout", LayerKind::Dropout, "Zeroes activations with probability rate while training.",
         {layerKey("rate", SchemaType::Number, nullptr, Range::ge(0).lt(1), "Probability of dropping an activation.",
                   toLayer(&LayerSpec::rate))}},
    };
}

SchemaKey modelSection() {
    SchemaKey preset = choice("preset", nullptr, {"logreg", "mlp", "cnn"},
                              "A ready model: logreg (flatten, dense 10), mlp (benchmark W1), cnn (benchmark W2).",
                              [](const json& v, Experiment& out) {
                                  out.model.preset = v.get<std::string>();
                                  out.model.layers = engine::presetLayers(out.model.preset);
                              });
    SchemaKey layers = base("layers", SchemaType::Layers, nullptr, "Custom model: layers applied in order to the image.");
    layers.layerTypes = layerTypes();
    SchemaKey model = section("model", "What is trained. Give exactly one of preset and layers.", {preset, layers});
    model.required = true;
    model.oneOf = {"preset", "layers"};
    return model;
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

    SchemaKey data = section("data", "Where the training and test data come from and how batches are made.", {
        choice("dataset", d.dataset, {"fashion-mnist", "idx"},
               "Data set format. 'idx' is any folder of IDX files (e.g. MNIST) named by the four file keys.",
               to(&Experiment::data, &DataConfig::dataset)),
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
        flag("shuffle", d.shuffle, "Reshuffle the training set every epoch (seeded by seed).",
             to(&Experiment::data, &DataConfig::shuffle)),
        flag("drop_remainder", d.drop_remainder, "Drop the last, smaller batch of each epoch (static shapes).",
             to(&Experiment::data, &DataConfig::drop_remainder)),
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
    });
    train.checks.push_back([](const json& s, const std::string& where, IssueList& issues) {
        if (s["epochs"] == 0 && s["max_steps"] == 0)
            issues.add(where, "at least one of 'epochs' and 'max_steps' must be > 0 (both are 0, so the run would never end)");
        if (s["stop_at_target"] == true && s["target_accuracy"].get<double>() == 0)
            issues.add(where + ".stop_at_target", "needs train.target_accuracy > 0 (it is 0, so there is no target to stop at)");
    });

    SchemaKey root = section("", "An experiment file.", {
        name,
        description,
        integer("seed", t.seed, Range::ge(0), "Seeds initialisation, shuffling and dropout; same seed, same run.",
                to(&Experiment::train, &TrainConfig::seed)),
        data,
        modelSection(),
        optimizer,
        train,
    });
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
