#include "engine/inference/weightcache.h"

namespace trainbench::engine::inference {

using dnnl::memory;

dnnl::memory WeightCache::get(const std::string& name, const memory::desc& wanted) {
    graph::Initializer& init = graph_.initializers.at(name);
    const memory::desc plain = Tensor::plainDesc(wanted.dims());
    if (wanted == plain) return memory(wanted, engine_, init.values.data());
    for (const Entry& e : reordered_)
        if (e.name == name && e.desc == wanted) return e.tensor->mem();
    auto tensor = std::make_unique<Tensor>(wanted, engine_);
    memory from(plain, engine_, init.values.data());
    dnnl::stream stream(engine_);
    dnnl::reorder(from, tensor->mem()).execute(stream, from, tensor->mem());
    stream.wait();
    reordered_.push_back({name, wanted, std::move(tensor)});
    return reordered_.back().tensor->mem();
}

std::string WeightCache::matchingInput(const std::string& name, const memory::desc& input) {
    for (const Entry& e : permuted_)
        if (e.desc == input && e.name.rfind(name + "@", 0) == 0) return e.name;
    const graph::Initializer& init = graph_.initializers.at(name);
    Dims dims = input.dims();
    dims[0] = init.dims[0];
    const memory::desc rows = Tensor::withBatch(input, dims[0]);  // a row per unit, laid out as an example
    Tensor permuted(rows, engine_);
    memory from(Tensor::plainDesc(dims), engine_, const_cast<float*>(init.values.data()));
    dnnl::stream stream(engine_);
    dnnl::reorder(from, permuted.mem()).execute(stream, from, permuted.mem());
    stream.wait();
    const std::string derived = name + "@" + std::to_string(permuted_.size());
    graph_.initializers[derived] = {{dims[0], static_cast<int64_t>(init.values.size()) / dims[0]},
                                    std::vector<float>(permuted.data(), permuted.data() + init.values.size())};
    permuted_.push_back({derived, input, nullptr});
    return derived;
}

}  // namespace trainbench::engine::inference
