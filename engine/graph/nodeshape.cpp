#include "engine/graph/nodeshape.h"

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

// Output extent of a window over `in` cells; fails when the window does not fit.
int64_t windowed(const Inputs& in, int64_t size, const Node& n) {
    if (size + 2 * n.pad < n.kernel)
        in.fail("kernel " + std::to_string(n.kernel) + " is larger than its input (" + std::to_string(size) +
                " with padding " + std::to_string(n.pad) + ")");
    return (size + 2 * n.pad - n.kernel) / n.stride + 1;
}

void windowAttributes(const Inputs& in, const Node& n) {
    if (n.kernel <= 0 || n.stride <= 0 || n.pad < 0)
        in.fail("kernel " + std::to_string(n.kernel) + ", stride " + std::to_string(n.stride) + ", pad " +
                std::to_string(n.pad) + ": kernel and stride must be positive, pad not negative");
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
            in.weight(1, {filters, x[0] / n.group, n.kernel, n.kernel}, "weight");
            if (filters <= 0) in.fail("weight '" + n.inputs[1] + "' has no filters");
            if (filters % n.group != 0)
                in.fail("group " + std::to_string(n.group) + " does not divide its " + std::to_string(filters) + " filters");
            if (n.inputs.size() == 3) in.weight(2, {filters}, "bias");
            return {filters, windowed(in, x[1], n), windowed(in, x[2], n)};
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
        case OpKind::MaxPool: {
            in.count(1, 1, "one input");
            const Dims& x = image(in, in.value(0));
            windowAttributes(in, n);
            if (2 * n.pad > n.kernel) in.fail("pad " + std::to_string(n.pad) + " is more than half the kernel");
            return {x[0], windowed(in, x[1], n), windowed(in, x[2], n)};
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
        case OpKind::Softmax: {
            in.count(1, 1, "one input");
            const Dims& x = in.value(0);
            if (x.size() != 1) in.fail("takes a [features] value (softmax over them), gets " + dimsText(x));
            return x;
        }
        case OpKind::AveragePool: {
            in.count(1, 1, "one input");
            const Dims& x = image(in, in.value(0));
            windowAttributes(in, n);
            if (2 * n.pad > n.kernel) in.fail("pad " + std::to_string(n.pad) + " is more than half the kernel");
            return {x[0], windowed(in, x[1], n), windowed(in, x[2], n)};
        }
    }
    in.fail("unknown op kind");
}

}  // namespace trainbench::engine::graph
