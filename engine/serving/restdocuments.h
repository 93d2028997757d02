#pragma once
// The JSON documents of TensorFlow Serving's REST API that the server answers with: predictions,
// model status, model metadata and errors, shaped as TF Serving shapes them so its clients read them.
#include <cstdint>
#include <string>

#include "engine/serving/predictrequest.h"
#include "engine/serving/servable.h"

namespace trainbench::engine::serving {

// {"predictions": [[...], ...]} (row format) or {"outputs": [[...], ...]} (columnar); numbers in
// the shortest text that reads back as the same float; NaN and ±Infinity as TF Serving writes them.
std::string predictionsJson(const float* out, int64_t n, int64_t outputs, PredictRequest::Format format);
// GET /v1/models/NAME: {"model_version_status": [{"version": "1", "state": "AVAILABLE", ...}]}
std::string modelStatusJson(const Servable& servable);
// GET /v1/models/NAME/metadata: model_spec and the serving_default signature_def.
std::string modelMetadataJson(const Servable& servable);
// {"error": "message"}
std::string errorJson(const std::string& message);

}  // namespace trainbench::engine::serving
