#pragma once
// What the inference server serves: a model under a name and version, the shape of one example
// it takes, how many numbers it answers per example, and a way to make model instances. The server
// runs several instances on threads of their own (engine/serving/batchscheduler.h); an instance is
// used by one thread at a time, so it need not be thread-safe and may keep scratch buffers sized
// for the largest batch it has seen. The model executor (engine/inference) provides real servables;
// the server knows nothing of graphs or oneDNN.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trainbench::engine::serving {

class ModelInstance {
public:
    virtual ~ModelInstance() = default;
    // Predicts `n` examples: `x` holds n × Servable::exampleSize() floats (examples one after
    // another, row-major within each), `out` receives n × Servable::outputs floats. Throws
    // std::exception for a failure that is the model's (the batch's requests answer 500 with it).
    virtual void predict(const float* x, int64_t n, float* out) = 0;
};

struct Servable {
    std::string name;                 // the NAME of /v1/models/NAME
    int64_t version = 1;              // /v1/models/NAME/versions/N; N must equal it
    std::vector<int64_t> inputShape;  // of one example, without the batch dimension: {784}, {28, 28, 1}
    int64_t outputs = 0;              // numbers per example (classes)
    std::string inputName = "input";  // the tensor name in metadata and in {"inputs": {NAME: ...}}
    std::string outputName = "output";
    // A model that reads integer token ids (a transformer's embedding table of this many rows): every
    // number of a request must be an integer from -id_rows to id_rows - 1, else the request is
    // refused (400) naming the place. 0: the input is any floats.
    int64_t id_rows = 0;
    std::function<std::unique_ptr<ModelInstance>()> newInstance;  // called once per instance, at start

    int64_t exampleSize() const {
        int64_t size = 1;
        for (int64_t d : inputShape) size *= d;
        return size;
    }
};

}  // namespace trainbench::engine::serving
