#include "engine/onnx/onnxshapes.h"

#include <algorithm>
#include <cstring>

#include "engine/model/layerstack.h"
#include "engine/onnx/onnxerror.h"

namespace trainbench::engine::onnx {

namespace {

std::string intsText(const std::vector<int64_t>& v) {
    std::string t = "[";
    for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + (v[i] == kBatchSymbol ? std::string("N") : std::to_string(v[i]));
    return t + "]";
}

const ::onnx::AttributeProto* attribute(const ::onnx::NodeProto& n, const char* name) {
    for (const ::onnx::AttributeProto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

bool hasBatch(const IntTensor& t) { return std::find(t.values.begin(), t.values.end(), kBatchSymbol) != t.values.end(); }

}  // namespace

IntTensor readIntTensor(const ::onnx::TensorProto& t, const std::string& where) {
    const bool i64 = t.data_type() == ::onnx::TensorProto::INT64;
    if (!i64 && t.data_type() != ::onnx::TensorProto::INT32)
        throw OnnxError(where + ": data type " + std::to_string(t.data_type()) + " is not an integer type (INT64 or INT32)");
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) throw OnnxError(where + ": external data is not supported");
    if (t.dims_size() > 1) throw OnnxError(where + ": an integer tensor of rank " + std::to_string(t.dims_size()) + " (only scalars and 1-D)");
    IntTensor out;
    out.scalar = t.dims_size() == 0;
    const int64_t count = out.scalar ? 1 : t.dims(0);
    if (count < 0 || count > kMaxIntConstant)
        throw OnnxError(where + ": " + std::to_string(count) + " integers (at most " + std::to_string(kMaxIntConstant) + ")");
    const size_t width = i64 ? 8 : 4;
    const bool raw = t.has_raw_data();
    const int64_t held = raw ? static_cast<int64_t>(t.raw_data().size() / width) : (i64 ? t.int64_data_size() : t.int32_data_size());
    if (held != count || (raw && t.raw_data().size() % width != 0))
        throw OnnxError(where + ": " + std::to_string(count) + " integers, its data holds another number");
    for (int64_t i = 0; i < count; ++i) {
        int64_t v = 0;
        if (raw && i64) {
            std::memcpy(&v, t.raw_data().data() + i * 8, 8);
        } else if (raw) {
            int32_t w = 0;
            std::memcpy(&w, t.raw_data().data() + i * 4, 4);
            v = w;
        } else {
            v = i64 ? t.int64_data(static_cast<int>(i)) : t.int32_data(static_cast<int>(i));
        }
        if (v == kBatchSymbol) v = kBatchSymbol + 1;  // INT64_MIN itself is never a shape; keep it distinct from N
        out.values.push_back(v);
    }
    return out;
}

const IntTensor* ShapeFolder::find(const std::string& name) const {
    const auto it = ints_.find(resolve_(name));
    return it == ints_.end() ? nullptr : &it->second;
}

const IntTensor& ShapeFolder::intInput(const ::onnx::NodeProto& n, int i, const char* role, const std::string& where) const {
    if (n.input_size() <= i || n.input(i).empty()) throw OnnxError(where + ": has no " + role + " (input " + std::to_string(i) + ")");
    const IntTensor* t = find(n.input(i));
    if (!t)
        throw OnnxError(where + ": its " + role + " '" + n.input(i) +
                        "' is not a constant nor computed from shapes (values known only at run time are not supported)");
    return *t;
}

bool ShapeFolder::fold(const ::onnx::NodeProto& n, const std::string& where) {
    const std::string& op = n.op_type();
    if (n.output_size() < 1 || n.input_size() < 1) return false;
    const auto known = [&](int i) { return n.input_size() > i && !n.input(i).empty() && find(n.input(i)) != nullptr; };
    IntTensor out;
    if (op == "Shape") {
        const std::string x = resolve_(n.input(0));
        std::vector<int64_t> full;
        if (const auto s = shapes_.find(x); s != shapes_.end()) {
            full.push_back(kBatchSymbol);
            full.insert(full.end(), s->second.begin(), s->second.end());
        } else if (const auto init = g_.initializers.find(x); init != g_.initializers.end()) {
            full = init->second.dims;
        } else if (const IntTensor* t = find(x)) {
            if (!t->scalar) full.push_back(static_cast<int64_t>(t->values.size()));
        } else {
            throw OnnxError(where + ": reads '" + n.input(0) + "', which is not defined before it");
        }
        // Opset 15's start and end (negative from the back, clamped).
        const auto rank = static_cast<int64_t>(full.size());
        const auto bound = [&](const char* name, int64_t fallback) {
            const ::onnx::AttributeProto* a = attribute(n, name);
            int64_t v = a ? a->i() : fallback;
            if (v < 0) v += rank;
            return std::clamp<int64_t>(v, 0, rank);
        };
        const int64_t start = bound("start", 0), end = bound("end", rank);
        out.values.assign(full.begin() + start, full.begin() + std::max(start, end));
    } else if (op == "Gather" && known(0) && known(1)) {
        const IntTensor& data = *find(n.input(0));
        const IntTensor& idx = *find(n.input(1));
        const ::onnx::AttributeProto* axis = attribute(n, "axis");
        if (data.scalar || (axis && axis->i() != 0)) throw OnnxError(where + ": gathers from a scalar or along an axis other than 0");
        const auto size = static_cast<int64_t>(data.values.size());
        for (int64_t i : idx.values) {
            if (i < -size || i >= size)
                throw OnnxError(where + ": index " + std::to_string(i) + " is outside " + intsText(data.values));
            out.values.push_back(data.values[static_cast<size_t>(i < 0 ? i + size : i)]);
        }
        out.scalar = idx.scalar;
    } else if ((op == "Unsqueeze" || op == "Squeeze") && known(0)) {
        const IntTensor& x = *find(n.input(0));
        const bool squeeze = op == "Squeeze";
        // Integers are scalars or 1-D: Unsqueeze makes a scalar 1-D, Squeeze a 1-D of one value a scalar.
        const std::vector<int64_t> ax = axes(n, squeeze ? (x.scalar ? 0 : 1) : (x.scalar ? 1 : 2), where);
        if ((squeeze && (x.scalar || x.values.size() != 1 || ax.size() > 1 || (ax.size() == 1 && ax[0] != 0))) ||
            (!squeeze && (!x.scalar || ax != std::vector<int64_t>{0})))
            throw OnnxError(where + ": integers of rank above 1 (from " + intsText(x.values) + ") are not supported");
        out.values = x.values;
        out.scalar = squeeze;
    } else if (op == "Concat") {
        for (int i = 0; i < n.input_size(); ++i)
            if (!known(i)) return false;
        for (int i = 0; i < n.input_size(); ++i) {
            const IntTensor& x = *find(n.input(i));
            if (x.scalar) throw OnnxError(where + ": concatenates a scalar '" + n.input(i) + "'");
            out.values.insert(out.values.end(), x.values.begin(), x.values.end());
        }
    } else if (op == "Slice" && known(0)) {
        const IntTensor& x = *find(n.input(0));
        if (x.scalar) throw OnnxError(where + ": slices a scalar");
        const auto size = static_cast<int64_t>(x.values.size());
        const auto get = [&](int i, const char* name, int64_t fallback) -> int64_t {
            std::vector<int64_t> v;
            if (opset_ < 10) {
                if (const ::onnx::AttributeProto* a = attribute(n, name)) v.assign(a->ints().begin(), a->ints().end());
            } else if (n.input_size() > i && !n.input(i).empty()) {
                v = intInput(n, i, name, where).values;
            }
            if (v.empty()) return fallback;
            if (v.size() != 1) throw OnnxError(where + ": " + name + " " + intsText(v) + " (integers are 1-D: one axis)");
            return v[0];
        };
        const int64_t axis = get(3, "axes", 0), step = get(4, "steps", 1);
        if (axis != 0 && axis != -1) throw OnnxError(where + ": slices axis " + std::to_string(axis) + " of a 1-D integer tensor");
        if (step == 0) throw OnnxError(where + ": a step of 0");
        const auto clampIndex = [&](int64_t v, bool forward) {
            if (v < 0) v += size;
            return forward ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
        };
        const int64_t start = clampIndex(get(1, "starts", 0), step > 0), end = clampIndex(get(2, "ends", size), step > 0);
        for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.values.push_back(x.values[static_cast<size_t>(i)]);
    } else if (op == "Cast" && known(0)) {
        out = *find(n.input(0));
    } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && known(0) && known(1)) {
        const IntTensor& a = *find(n.input(0));
        const IntTensor& b = *find(n.input(1));
        if (hasBatch(a) || hasBatch(b))
            throw OnnxError(where + ": computes with the batch dimension (" + intsText(a.values) + ", " + intsText(b.values) +
                            "); a shape may pass the batch along, not compute with it");
        if (a.values.size() != b.values.size() && a.values.size() != 1 && b.values.size() != 1)
            throw OnnxError(where + ": " + intsText(a.values) + " and " + intsText(b.values) + " do not broadcast");
        const size_t count = std::max(a.values.size(), b.values.size());
        for (size_t i = 0; i < count; ++i) {
            const int64_t x = a.values[a.values.size() == 1 ? 0 : i], y = b.values[b.values.size() == 1 ? 0 : i];
            if (op == "Div" && y == 0) throw OnnxError(where + ": divides by 0");
            // x is never INT64_MIN (readIntTensor keeps that for the batch), so x / y cannot overflow.
            int64_t v = op == "Div" ? x / y : 0;
            const bool overflow = op == "Add"   ? __builtin_add_overflow(x, y, &v)
                                  : op == "Sub" ? __builtin_sub_overflow(x, y, &v)
                                  : op == "Mul" ? __builtin_mul_overflow(x, y, &v)
                                                : false;
            if (overflow || v == kBatchSymbol)
                throw OnnxError(where + ": " + std::to_string(x) + " " + op + " " + std::to_string(y) + " overflows 64 bits");
            out.values.push_back(v);
        }
        out.scalar = a.scalar && b.scalar;
    } else {
        return false;
    }
    ints_[n.output(0)] = std::move(out);
    return true;
}

std::vector<int64_t> ShapeFolder::axes(const ::onnx::NodeProto& n, int64_t rank, const std::string& where) const {
    std::vector<int64_t> ax = rawAxes(n, where);
    for (int64_t& a : ax) {
        if (a < -rank || a >= rank) throw OnnxError(where + ": axis " + std::to_string(a) + " is outside rank " + std::to_string(rank));
        if (a < 0) a += rank;
    }
    std::sort(ax.begin(), ax.end());
    return ax;
}

std::vector<int64_t> ShapeFolder::rawAxes(const ::onnx::NodeProto& n, const std::string& where) const {
    if (opset_ < 13) {
        if (const ::onnx::AttributeProto* a = attribute(n, "axes")) return {a->ints().begin(), a->ints().end()};
        return {};
    }
    if (n.input_size() > 1 && !n.input(1).empty()) return intInput(n, 1, "axes", where).values;
    return {};
}

graph::Dims ShapeFolder::unsqueezed(const ::onnx::NodeProto& n, const graph::Dims& input, bool squeeze,
                                    const std::string& where) const {
    graph::Dims full{kBatchSymbol};
    full.insert(full.end(), input.begin(), input.end());
    const auto rank = static_cast<int64_t>(full.size());
    if (!squeeze) {
        // Unsqueeze's axes count in the output's rank.
        const std::vector<int64_t> ax = axes(n, rank + static_cast<int64_t>(rawAxes(n, where).size()), where);
        if (ax.empty()) throw OnnxError(where + ": no axes");
        for (int64_t a : ax) {
            if (a == 0) throw OnnxError(where + ": inserts an axis before the batch's");
            full.insert(full.begin() + a, 1);
        }
    } else {
        std::vector<int64_t> ax = axes(n, rank, where);
        if (ax.empty())
            for (int64_t a = 1; a < rank; ++a)
                if (full[static_cast<size_t>(a)] == 1) ax.push_back(a);
        for (auto it = ax.rbegin(); it != ax.rend(); ++it) {
            if (*it == 0) throw OnnxError(where + ": squeezes the batch's axis");
            if (full[static_cast<size_t>(*it)] != 1)
                throw OnnxError(where + ": squeezes axis " + std::to_string(*it) + " of " + std::to_string(full[static_cast<size_t>(*it)]));
            full.erase(full.begin() + *it);
        }
    }
    return graph::Dims(full.begin() + 1, full.end());
}

graph::Dims ShapeFolder::reshapeTarget(const std::string& shape, const graph::Dims& input, const std::string& where) const {
    const IntTensor* t = find(shape);
    if (!t)
        throw OnnxError(where + ": its shape '" + shape +
                        "' is not a constant nor computed from shapes (shapes known only at run time are not supported)");
    const std::vector<int64_t>& s = t->values;
    int64_t count = 1;
    for (int64_t d : input) count *= d;
    // The batch stays first: N itself, 0 (copy the input's), or -1 when the rest leaves exactly the batch.
    if (t->scalar || s.empty() || (s[0] != kBatchSymbol && s[0] != 0 && s[0] != -1))
        throw OnnxError(where + ": shape " + intsText(s) + " does not keep the batch dimension first (N, 0 or -1 there)");
    graph::Dims out;
    int64_t known = 1, infer = -1;
    for (size_t i = 1; i < s.size(); ++i) {
        int64_t d = s[i];
        if (d == kBatchSymbol) throw OnnxError(where + ": shape " + intsText(s) + " moves the batch dimension");
        if (d == 0) {
            if (i - 1 >= input.size()) throw OnnxError(where + ": shape " + intsText(s) + " copies a dimension the input has not");
            d = input[i - 1];
        }
        if (d == -1) {
            if (infer >= 0 || s[0] == -1) throw OnnxError(where + ": shape " + intsText(s) + " infers more than one dimension");
            infer = static_cast<int64_t>(out.size());
        } else if (d <= 0) {
            throw OnnxError(where + ": shape " + intsText(s) + " has a dimension " + std::to_string(d));
        } else {
            known *= d;
            if (known > count) throw OnnxError(where + ": shape " + intsText(s) + " holds more than the input's " + dimsText(input));
        }
        out.push_back(d);
    }
    if (infer >= 0) {
        if (count % known != 0) throw OnnxError(where + ": shape " + intsText(s) + " does not divide the input's " + dimsText(input));
        out[static_cast<size_t>(infer)] = count / known;
        known = count;
    }
    if (known != count)
        throw OnnxError(where + ": shape " + intsText(s) + " holds " + std::to_string(known) + " values per example, the input " +
                        dimsText(input) + " has " + std::to_string(count));
    return out;
}

}  // namespace trainbench::engine::onnx
