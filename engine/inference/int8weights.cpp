#include "engine/inference/int8plan.h"

#include "engine/tensor/tensor.h"

namespace trainbench::engine::inference {

using dnnl::memory;

memory Int8Weights::reordered(const std::string& key, const memory& plain, const memory::desc& wanted) {
    for (const Entry& e : entries_)
        if (e.key == key && e.desc == wanted) return e.mem;
    memory to(wanted, engine_);
    dnnl::stream stream(engine_);
    dnnl::reorder(plain, to).execute(stream, const_cast<memory&>(plain), to);
    stream.wait();
    entries_.push_back({key, wanted, to});
    return to;
}

memory Int8Weights::weight(const std::string& name, const memory::desc& wanted) {
    const QuantizedWeight& w = graph_.weights.at(name);
    memory::desc plain = Tensor::plainDesc(wanted.dims());
    plain.data.data_type = dnnl_s8;
    // oneDNN reads the codes only; its memory objects take a non-const handle.
    memory from(plain, engine_, const_cast<int8_t*>(w.values.data()));
    return reordered(name, from, wanted);
}

memory Int8Weights::bias(const std::string& name, const std::string& weightName, float inputScale,
                         const memory::desc& wanted) {
    const std::string key = name + "@" + std::to_string(inputScale);
    for (const Entry& e : entries_)
        if (e.key == key && e.desc == wanted) return e.mem;
    const std::vector<float>& b = graph_.graph.initializers.at(name).values;
    const std::vector<float>& scales = graph_.weights.at(weightName).scales;
    std::vector<float> scaled(b.size());
    for (size_t c = 0; c < b.size(); ++c) scaled[c] = b[c] / (inputScale * scales[c]);
    memory from(Tensor::plainDesc({static_cast<int64_t>(b.size())}), engine_, scaled.data());
    return reordered(key, from, wanted);
}

}  // namespace trainbench::engine::inference
