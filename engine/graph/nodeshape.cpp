#include "engine/graph/nodeshape.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "engine/model/layerstack.h"

namespace trainbench::engine::graph {

namespace {

int64_t product(const Dims& d) { return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>()); }

// Reads a node's inputs in the order its kind defines them, each a value or an initializer.
class Inputs {
public:
    Inputs(const Graph& g, const Node& n, const std::map<std::string, Dims>& shapes, const std::string& where)
        : g_(g), n_(n), shapes_(shapes), where_(where) {}

    void count(size_t least, size_t most, const char* what) const {
        if (n_.inputs.size() < least || n_.inputs.size() > most)
            fail("takes " + std::string(what) + ", has " + std::to_string(n_.inputs.size()) + " inputs");
    }
    const Dims& value(size_t i) const {
        const std::string& name = n_.inputs[i];
        const auto it = shapes_.find(name);
        if (it != shapes_.end()) return it->second;
        if (g_.initializers.count(name)) fail("input " + std::to_string(i) + " '" + name + "' is an initializer, not a value");
        fail("input " + std::to_string(i) + " '" + name + "' is not defined before it (not the graph's input, not an earlier node's output)");
    }
    // The dims of initializer input i.
    const Dims& init(size_t i, const char* role) const {
        const std::string& name = n_.inputs[i];
        const auto it = g_.initializers.find(name);
        if (it == g_.initializers.end())
            fail(std::string(role) + " '" + name + "' (input " + std::to_string(i) + ") is not an initializer");
        return it->second.dims;
    }
    // An initializer input whose dims must be `expected`.
    void weight(size_t i, const Dims& expected, const char* role) const {
        const std::string& name = n_.inputs[i];
        if (init(i, role) != expected)
            fail(std::string(role) + " '" + name + "' is " + dimsText(init(i, role)) + ", the input needs " +
                 dimsText(expected));
    }
    [[noreturn]] void fail(const std::string& what) const { throw GraphError(where_ + ": " + what); }

private:
    const Graph& g_;
    const Node& n_;
    const std::map<std::string, Dims>& shapes_;
    const std::string& where_;
};

// Output extent of a window over `size` cells (kernel k, stride s, padding before and after, dilation
// d); fails when the window does not fit.
int64_t windowed(const Inputs& in, int64_t size, int64_t k, int64_t s, int64_t before, int64_t after, int64_t d,
                 const char* axis) {
    const int64_t span = d * (k - 1) + 1;
    if (size + before + after < span)
        in.fail(std::string("the kernel's ") + axis + " " + std::to_string(span) + " is larger than its input's (" +
                std::to_string(size) + " with padding " + std::to_string(before) + " + " + std::to_string(after) + ")");
    return (size + before + after - span) / s + 1;
}

Dims windowOutput(const Inputs& in, const Dims& x, int64_t channels, const Node& n) {
    return {channels, windowed(in, x[1], n.kernel, n.stride, n.pad, n.padBottom(), n.dilation, "height"),
            windowed(in, x[2], n.kernelW(), n.strideW(), n.padLeft(), n.padRight(), n.dilationW(), "width")};
}

void windowAttributes(const Inputs& in, const Node& n) {
    if (n.kernel <= 0 || n.kernelW() <= 0 || n.stride <= 0 || n.strideW() <= 0 || n.pad < 0 || n.padLeft() < 0 ||
        n.padBottom() < 0 || n.padRight() < 0 || n.dilation <= 0 || n.dilationW() <= 0)
        in.fail(n.windowText() + ": kernel, stride and dilation must be positive, pads not negative");
    if (n.kind != OpKind::Conv && (n.dilation != 1 || n.dilationW() != 1))
        in.fail("dilation " + std::to_string(n.dilation) + "x" + std::to_string(n.dilationW()) + " (only convolutions dilate)");
}

// A pooling's padding is empty cells at the edge: each side less than the kernel there.
void poolPads(const Inputs& in, const Node& n) {
    if (n.pad >= n.kernel || n.padBottom() >= n.kernel || n.padLeft() >= n.kernelW() || n.padRight() >= n.kernelW())
        in.fail(n.windowText() + ": a pad as large as the kernel");
}

const Dims& image(const Inputs& in, const Dims& x) {
    if (x.size() != 3) in.fail("needs a [channels, height, width] input, gets " + dimsText(x));
    return x;
}

}  // namespace

bool isBinary(OpKind kind) {
    return kind == OpKind::Add || kind == OpKind::Mul || kind == OpKind::Sub || kind == OpKind::Div;
}

std::optional<Dims> broadcastDims(const Dims& x, const Dims& operand) {
    Dims b = operand;
    if (b.size() == x.size() + 1) {
        if (b[0] != 1) return std::nullopt;
        b.erase(b.begin());
    }
    if (b.size() > x.size()) return std::nullopt;
    b.insert(b.begin(), x.size() - b.size(), 1);
    for (size_t i = 0; i < x.size(); ++i)
        if (b[i] != 1 && b[i] != x[i]) return std::nullopt;
    return b;
}

Dims nodeOutputShape(const Graph& g, const Node& n, const std::map<std::string, Dims>& shapes, const std::string& where) {
    const Inputs in(g, n, shapes, where);
    if (n.fused_relu && n.kind != OpKind::Conv && n.kind != OpKind::Gemm && n.kind != OpKind::BatchNormalization &&
        n.kind != OpKind::Add)
        in.fail("fused_relu is only for Conv, Gemm, BatchNormalization and Add");
    switch (n.kind) {
        case OpKind::Conv: {
            in.count(2, 3, "x, W and an optional B");
            const Dims& x = image(in, in.value(0));
            windowAttributes(in, n);
            const Dims& w = in.init(1, "weight");
            const int64_t filters = w.empty() ? 0 : w[0];
            if (n.group <= 0 || x[0] % n.group != 0)
                in.fail("group " + std::to_string(n.group) + " does not divide its " + std::to_string(x[0]) + " input channels");
            in.weight(1, {filters, x[0] / n.group, n.kernel, n.kernelW()}, "weight");
            if (filters <= 0) in.fail("weight '" + n.inputs[1] + "' has no filters");
            if (filters % n.group != 0)
                in.fail("group " + std::to_string(n.group) + " does not divide its " + std::to_string(filters) + " filters");
            if (n.inputs.size() == 3) in.weight(2, {filters}, "bias");
            return windowOutput(in, x, filters, n);
        }
        case OpKind::Gemm: {
            in.count(2, 3, "x, W and an optional B");
            const int64_t features = product(in.value(0));
            const Dims& w = in.init(1, "weight");
            const int64_t units = w.empty() ? 0 : w[0];
            if (units <= 0) in.fail("weight '" + n.inputs[1] + "' has no output features");
            in.weight(1, {units, features}, "weight");
            if (n.inputs.size() == 3) in.weight(2, {units}, "bias");
            return {units};
        }
        case OpKind::BatchNormalization: {
            in.count(5, 5, "x, scale, bias, mean and var");
            const Dims& x = in.value(0);
            if (x.empty()) in.fail("needs an input with a channel dimension");
            if (!(n.epsilon > 0.0f)) in.fail("epsilon must be positive, is " + std::to_string(n.epsilon));
            const char* roles[] = {"scale", "bias", "mean", "var"};
            for (size_t i = 1; i < 5; ++i) in.weight(i, {x[0]}, roles[i - 1]);
            return x;
        }
        case OpKind::Relu:
            in.count(1, 1, "one input");
            return in.value(0);
        case OpKind::MaxPool:
        case OpKind::AveragePool: {
            in.count(1, 1, "one input");
            const Dims& x = image(in, in.value(0));
            windowAttributes(in, n);
            poolPads(in, n);
            return windowOutput(in, x, x[0], n);
        }
        case OpKind::GlobalAveragePool: {
            in.count(1, 1, "one input");
            return {image(in, in.value(0))[0], 1, 1};
        }
        case OpKind::Flatten:
            in.count(1, 1, "one input");
            return {product(in.value(0))};
        case OpKind::Clip:
            in.count(1, 1, "one input (its bounds are attributes)");
            if (!(n.clip_min <= n.clip_max))
                in.fail("min " + std::to_string(n.clip_min) + " is above max " + std::to_string(n.clip_max));
            return in.value(0);
        case OpKind::Add:
        case OpKind::Mul:
        case OpKind::Sub:
        case OpKind::Div: {
            in.count(2, 2, "two inputs");
            const Dims& a = in.value(0);
            if (!shapes.count(n.inputs[1]) && g.initializers.count(n.inputs[1])) {
                const Dims& b = in.init(1, "operand");
                if (!broadcastDims(a, b))
                    in.fail("its operand '" + n.inputs[1] + "' is " + dimsText(b) + ", which does not broadcast against its " +
                            dimsText(a) + " input");
                return a;
            }
            const Dims& b = in.value(1);
            if (a != b)
                in.fail(std::string("combines a ") + dimsText(a) + " value with a " + dimsText(b) +
                        " one (values must have the same shape; only an initializer broadcasts)");
            return a;
        }
        case OpKind::Sigmoid:
        case OpKind::Tanh:
            in.count(1, 1, "one input");
            return in.value(0);
        case OpKind::Softmax:
        case OpKind::Erf: {
            in.count(1, 1, "one input");
            return in.value(0);  // Softmax: over the last axis
        }
        case OpKind::MatMul: {
            in.count(2, 2, "a and b");
            const Dims& a = in.value(0);
            if (a.empty()) in.fail("needs a value with a last axis to multiply");
            Dims out(a.begin(), a.end() - 1);
            if (!shapes.count(n.inputs[1]) && g.initializers.count(n.inputs[1])) {
                const Dims& b = in.init(1, "b");
                if (b.size() != 2 || b[0] != a.back() || b[1] <= 0)
                    in.fail("b '" + n.inputs[1] + "' is " + dimsText(b) + ", the input needs [" + std::to_string(a.back()) +
                            ", outputs]");
                out.push_back(b[1]);
                return out;
            }
            const Dims& b = in.value(1);
            if (a.size() < 2 || b.size() != a.size() || !std::equal(a.begin(), a.end() - 2, b.begin()) || b[b.size() - 2] != a.back())
                in.fail("multiplies a " + dimsText(a) + " value by a " + dimsText(b) +
                        " one (batched matrices need the same leading dims and a's columns as b's rows)");
            out.push_back(b.back());
            return out;
        }
        case OpKind::Gather: {
            if (n.inputs.size() == 2) {  // an embedding: ids, table
                const Dims& ids = in.value(0);
                const Dims& table = in.init(1, "table");
                if (n.axis != 0) in.fail("a table gathered along axis " + std::to_string(n.axis) + " (only 0, its rows)");
                if (table.empty() || table[0] <= 0) in.fail("table '" + n.inputs[1] + "' is " + dimsText(table) + ", has no rows");
                Dims out = ids;
                out.insert(out.end(), table.begin() + 1, table.end());
                return out;
            }
            in.count(1, 1, "ids and a table, or a value (its indices constant)");
            const Dims& x = in.value(0);
            if (n.axis < 1 || n.axis > static_cast<int64_t>(x.size()))
                in.fail("gathers along axis " + std::to_string(n.axis) + " of a [batch, " + dimsText(x) +
                        "] value (the batch's, 0, is not gathered from)");
            const int64_t extent = x[static_cast<size_t>(n.axis - 1)];
            if (n.ints.empty() || (n.scalar_index && n.ints.size() != 1)) in.fail("has no indices (or several for a scalar)");
            for (int64_t i : n.ints)
                if (i < -extent || i >= extent)
                    in.fail("index " + std::to_string(i) + " is outside axis " + std::to_string(n.axis) + "'s " + std::to_string(extent));
            Dims out = x;
            if (n.scalar_index) out.erase(out.begin() + (n.axis - 1));
            else out[static_cast<size_t>(n.axis - 1)] = static_cast<int64_t>(n.ints.size());
            return out;
        }
        case OpKind::LayerNormalization: {
            in.count(3, 3, "x, scale and bias");
            const Dims& x = in.value(0);
            if (x.empty()) in.fail("needs a value with a last axis to normalize");
            if (!(n.epsilon > 0.0f)) in.fail("epsilon must be positive, is " + std::to_string(n.epsilon));
            in.weight(1, {x.back()}, "scale");
            in.weight(2, {x.back()}, "bias");
            return x;
        }
        case OpKind::Reshape: {
            in.count(1, 1, "one input (its shape is an attribute)");
            const Dims& x = in.value(0);
            if (n.ints.empty() || std::any_of(n.ints.begin(), n.ints.end(), [](int64_t d) { return d <= 0 || d > (int64_t{1} << 40); }) ||
                product(n.ints) != product(x))
                in.fail("reshapes " + dimsText(x) + " to " + dimsText(n.ints) + " per example (the same number of values, none 0)");
            return n.ints;
        }
        case OpKind::Transpose: {
            in.count(1, 1, "one input");
            const Dims& x = in.value(0);
            Dims sorted = n.ints;
            std::sort(sorted.begin(), sorted.end());
            bool permutation = sorted.size() == x.size() + 1;
            for (size_t i = 0; permutation && i < sorted.size(); ++i) permutation = sorted[i] == static_cast<int64_t>(i);
            if (!permutation || n.ints[0] != 0)
                in.fail("perm " + dimsText(n.ints) + " is not a permutation of a [batch, " + dimsText(x) +
                        "] value's axes keeping the batch's (0) first");
            Dims out;
            for (size_t i = 1; i < n.ints.size(); ++i) out.push_back(x[static_cast<size_t>(n.ints[i] - 1)]);
            return out;
        }
        case OpKind::Concat: {
            if (n.inputs.empty()) in.fail("has no inputs");
            Dims out = in.value(0);
            if (n.axis < 1 || n.axis > static_cast<int64_t>(out.size()))
                in.fail("concatenates along axis " + std::to_string(n.axis) + " of a [batch, " + dimsText(out) +
                        "] value (the batch's, 0, is not joined along)");
            const auto at = static_cast<size_t>(n.axis - 1);
            for (size_t i = 1; i < n.inputs.size(); ++i) {
                Dims x = in.value(i);
                if (x.size() != out.size()) in.fail("joins a " + dimsText(out) + " value and a " + dimsText(x) + " one");
                const int64_t along = x[at];
                x[at] = out[at];
                if (x != out) in.fail("joins a " + dimsText(out) + " value and a " + dimsText(in.value(i)) + " one along axis " + std::to_string(n.axis));
                out[at] += along;
            }
            return out;
        }
    }
    in.fail("unknown op kind");
}

}  // namespace trainbench::engine::graph
