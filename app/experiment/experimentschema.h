#pragma once
// The experiment-file schema: every key, its type, range, default and meaning, and where it goes
// in the engine's structs. Adding a key is one entry in experimentschema.cpp; the validator,
// override parser, docs test and GUI form pick it up from here.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/schemakey.h"

namespace trainbench::app {

// The root: an Object whose keys are the top-level keys and sections of an experiment file.
const SchemaKey& experimentSchema();

// The schema as JSON, for GUIs and `trainbench-cli`: {"keys": [{"key", "type", "default",
// "default_text", "range", "description", "choices"?, "keys"?, "layer_types"?}, ...]}, in file order.
nlohmann::json experimentSchemaJson();

// "unknown key; did you mean 'batch_size'?" — the closest of `known`, else the section where the key
// belongs ("did you mean 'optimizer.learning_rate'?"), else the list of known keys. context, if given,
// goes after "unknown key" ("for a conv2d layer") and turns off the search in other sections.
std::string unknownKeyMessage(const std::string& key, const std::vector<std::string>& known,
                              const std::string& context = "");

}  // namespace trainbench::app
