#include "engine/graph/referenceevaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/graph/nodeshape.h"

namespace trainbench::engine::graph {

namespace {

using Values = std::vector<double>;

double relu(double v, bool on) { return on && v < 0.0 ? 0.0 : v; }

const std::vector<float>& weights(const Graph& g, const Node& n, size_t i) { return g.initializers.at(n.inputs[i]).values; }

Values conv(const Graph& g, const Node& n, const Values& x, const Dims& in, const Dims& out) {
    const std::vector<float>& w = weights(g, n, 1);
    // Group g's filters read only its channels: filter o reads channels (o / per-group filters) * c onwards.
    const int64_t c = in[0] / n.group, h = in[1], wd = in[2], kh = n.kernel, kw = n.kernelW(), perGroup = out[0] / n.group;
    Values y(static_cast<size_t>(out[0] * out[1] * out[2]));
    for (int64_t o = 0; o < out[0]; ++o)
        for (int64_t oy = 0; oy < out[1]; ++oy)
            for (int64_t ox = 0; ox < out[2]; ++ox) {
                double sum = n.inputs.size() == 3 ? weights(g, n, 2)[static_cast<size_t>(o)] : 0.0;
                const int64_t first = (o / perGroup) * c;
                for (int64_t i = 0; i < c; ++i)
                    for (int64_t ky = 0; ky < kh; ++ky)
                        for (int64_t kx = 0; kx < kw; ++kx) {
                            const int64_t iy = oy * n.stride - n.pad + ky * n.dilation,
                                          ix = ox * n.strideW() - n.padLeft() + kx * n.dilationW();
                            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;  // zero padding
                            sum += double(w[static_cast<size_t>(((o * c + i) * kh + ky) * kw + kx)]) *
                                   x[static_cast<size_t>(((first + i) * h + iy) * wd + ix)];
                        }
                y[static_cast<size_t>((o * out[1] + oy) * out[2] + ox)] = relu(sum, n.fused_relu);
            }
    return y;
}

Values gemm(const Graph& g, const Node& n, const Values& x, const Dims& out) {
    const std::vector<float>& w = weights(g, n, 1);
    const size_t units = static_cast<size_t>(out[0]), features = x.size();
    Values y(units);
    for (size_t o = 0; o < units; ++o) {
        double sum = n.inputs.size() == 3 ? weights(g, n, 2)[o] : 0.0;
        for (size_t i = 0; i < features; ++i) sum += double(w[o * features + i]) * x[i];
        y[o] = relu(sum, n.fused_relu);
    }
    return y;
}

Values batchNorm(const Graph& g, const Node& n, Values x, const Dims& in) {
    const size_t channels = static_cast<size_t>(in[0]), per = x.size() / channels;
    for (size_t c = 0; c < channels; ++c) {
        const double s = weights(g, n, 1)[c] / std::sqrt(double(weights(g, n, 4)[c]) + double(n.epsilon));
        for (size_t k = 0; k < per; ++k) {
            double& v = x[c * per + k];
            v = relu((v - weights(g, n, 3)[c]) * s + weights(g, n, 2)[c], n.fused_relu);
        }
    }
    return x;
}

Values maxPool(const Node& n, const Values& x, const Dims& in, const Dims& out) {
    Values y(static_cast<size_t>(out[0] * out[1] * out[2]));
    for (int64_t c = 0; c < out[0]; ++c)
        for (int64_t oy = 0; oy < out[1]; ++oy)
            for (int64_t ox = 0; ox < out[2]; ++ox) {
                double m = -std::numeric_limits<double>::infinity();  // padding is never the max
                for (int64_t ky = 0; ky < n.kernel; ++ky)
                    for (int64_t kx = 0; kx < n.kernelW(); ++kx) {
                        const int64_t iy = oy * n.stride - n.pad + ky, ix = ox * n.strideW() - n.padLeft() + kx;
                        if (iy >= 0 && iy < in[1] && ix >= 0 && ix < in[2])
                            m = std::max(m, x[static_cast<size_t>((c * in[1] + iy) * in[2] + ix)]);
                    }
                y[static_cast<size_t>((c * out[1] + oy) * out[2] + ox)] = m;
            }
    return y;
}

Values averagePool(const Node& n, const Values& x, const Dims& in, const Dims& out) {
    Values y(static_cast<size_t>(out[0] * out[1] * out[2]));
    for (int64_t c = 0; c < out[0]; ++c)
        for (int64_t oy = 0; oy < out[1]; ++oy)
            for (int64_t ox = 0; ox < out[2]; ++ox) {
                double sum = 0.0;
                int64_t cells = 0;
                for (int64_t ky = 0; ky < n.kernel; ++ky)
                    for (int64_t kx = 0; kx < n.kernelW(); ++kx) {
                        const int64_t iy = oy * n.stride - n.pad + ky, ix = ox * n.strideW() - n.padLeft() + kx;
                        if (iy >= 0 && iy < in[1] && ix >= 0 && ix < in[2]) {
                            sum += x[static_cast<size_t>((c * in[1] + iy) * in[2] + ix)];
                            ++cells;
                        }
                    }
                const int64_t divisor = n.count_include_pad ? n.kernel * n.kernelW() : cells;
                y[static_cast<size_t>((c * out[1] + oy) * out[2] + ox)] = sum / double(divisor);
            }
    return y;
}

// a (op) b, b broadcast from an initializer or a value of a's shape.
Values binary(const Graph& g, const Node& n, const Values& a, const Dims& in, const std::map<std::string, Values>& values) {
    Values y = a;
    const auto value = values.find(n.inputs[1]);
    std::vector<double> b;
    std::vector<size_t> index(a.size());
    if (value != values.end()) {
        b = value->second;
        for (size_t i = 0; i < index.size(); ++i) index[i] = i;
    } else {
        const Initializer& init = g.initializers.at(n.inputs[1]);
        b.assign(init.values.begin(), init.values.end());
        const Dims bd = *broadcastDims(in, init.dims);
        // Element i of a at coordinates (c0, c1, ...) reads b at (c0 % bd0, ...): 0 where b's dim is 1.
        for (size_t i = 0; i < index.size(); ++i) {
            size_t rest = i, at = 0, stride = 1;
            for (size_t d = in.size(); d-- > 0;) {
                const auto extent = static_cast<size_t>(in[d]);
                const size_t coord = rest % extent;
                rest /= extent;
                if (bd[d] != 1) at += coord * stride;
                stride *= static_cast<size_t>(bd[d]);
            }
            index[i] = at;
        }
    }
    for (size_t i = 0; i < y.size(); ++i) {
        const double v = b[index[i]];
        switch (n.kind) {
            case OpKind::Add: y[i] = relu(y[i] + v, n.fused_relu); break;
            case OpKind::Mul: y[i] *= v; break;
            case OpKind::Sub: y[i] -= v; break;
            default: y[i] /= v; break;
        }
    }
    return y;
}

Values globalAveragePool(const Values& x, const Dims& in) {
    const size_t channels = static_cast<size_t>(in[0]), per = static_cast<size_t>(in[1] * in[2]);
    Values y(channels, 0.0);
    for (size_t c = 0; c < channels; ++c) {
        for (size_t k = 0; k < per; ++k) y[c] += x[c * per + k];
        y[c] /= double(per);
    }
    return y;
}

int64_t count(const Dims& d) {
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    return n;
}

// a [..., M, K] times b: an initializer [K, P] or a value [..., K, P].
Values matMul(const Graph& g, const Node& n, const Values& a, const Dims& in, const Dims& out,
              const std::map<std::string, Values>& values) {
    const auto bv = values.find(n.inputs[1]);
    const int64_t k = in.back(), p = out.back(), m = in.size() >= 2 ? in[in.size() - 2] : 1;
    const int64_t mats = count(in) / (m * k);
    Values y(static_cast<size_t>(mats * m * p));
    for (int64_t b = 0; b < mats; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < p; ++j) {
                double sum = 0.0;
                for (int64_t t = 0; t < k; ++t) {
                    const double w = bv != values.end() ? bv->second[static_cast<size_t>((b * k + t) * p + j)]
                                                        : double(weights(g, n, 1)[static_cast<size_t>(t * p + j)]);
                    sum += a[static_cast<size_t>((b * m + i) * k + t)] * w;
                }
                y[static_cast<size_t>((b * m + i) * p + j)] = sum;
            }
    return y;
}

// An embedding's rows for integer ids, or a value's slices at constant indices along an axis.
Values gather(const Graph& g, const Node& n, const Values& x, const Dims& in) {
    Values y;
    if (n.inputs.size() == 2) {
        const Initializer& table = g.initializers.at(n.inputs[1]);
        const auto rows = table.dims[0];
        const auto width = static_cast<size_t>(count(table.dims) / rows);
        for (size_t i = 0; i < x.size(); ++i) {
            const double id = x[i];
            if (id != std::floor(id) || id < double(-rows) || id >= double(rows))
                throw GraphError("node '" + n.name + "' (Gather): id " + std::to_string(id) + " at position " + std::to_string(i) +
                                 " is not a row of the " + std::to_string(rows) + "-row table '" + n.inputs[1] + "'");
            const auto row = static_cast<size_t>(id < 0 ? id + double(rows) : id);
            y.insert(y.end(), table.values.begin() + static_cast<std::ptrdiff_t>(row * width),
                     table.values.begin() + static_cast<std::ptrdiff_t>((row + 1) * width));
        }
        return y;
    }
    const auto axis = static_cast<size_t>(n.axis - 1);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= in[d];
    for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
    const int64_t extent = in[axis];
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t index : n.ints) {
            const int64_t at = (o * extent + (index < 0 ? index + extent : index)) * inner;
            y.insert(y.end(), x.begin() + at, x.begin() + at + inner);
        }
    return y;
}

// Over the last axis: (x - mean) / sqrt(var + epsilon) * scale + bias.
Values layerNorm(const Graph& g, const Node& n, Values x, const Dims& in) {
    const auto d = static_cast<size_t>(in.back());
    for (size_t r = 0; r < x.size() / d; ++r) {
        double mean = 0.0, var = 0.0;
        for (size_t i = 0; i < d; ++i) mean += x[r * d + i];
        mean /= double(d);
        for (size_t i = 0; i < d; ++i) var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
        const double inv = 1.0 / std::sqrt(var / double(d) + double(n.epsilon));
        for (size_t i = 0; i < d; ++i)
            x[r * d + i] = (x[r * d + i] - mean) * inv * weights(g, n, 1)[i] + weights(g, n, 2)[i];
    }
    return x;
}

Values transpose(const Node& n, const Values& x, const Dims& in, const Dims& out) {
    // Output coordinate j of per-example axis i reads the input's axis perm[i + 1] - 1.
    const size_t rank = in.size();
    std::vector<int64_t> inStride(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) inStride[d] = inStride[d + 1] * in[d + 1];
    Values y(x.size());
    for (size_t i = 0; i < y.size(); ++i) {
        size_t rest = i;
        int64_t at = 0;
        for (size_t d = rank; d-- > 0;) {
            const auto extent = static_cast<size_t>(out[d]);
            at += static_cast<int64_t>(rest % extent) * inStride[static_cast<size_t>(n.ints[d + 1] - 1)];
            rest /= extent;
        }
        y[i] = x[static_cast<size_t>(at)];
    }
    return y;
}

Values concat(const Node& n, const std::map<std::string, Values>& values, const std::map<std::string, Dims>& shapes) {
    const auto axis = static_cast<size_t>(n.axis - 1);
    const Dims& first = shapes.at(n.inputs[0]);
    int64_t outer = 1;
    for (size_t d = 0; d < axis; ++d) outer *= first[d];
    Values y;
    for (int64_t o = 0; o < outer; ++o)
        for (const std::string& in : n.inputs) {
            const Values& x = values.at(in);
            const auto part = static_cast<int64_t>(x.size()) / outer;
            y.insert(y.end(), x.begin() + o * part, x.begin() + (o + 1) * part);
        }
    return y;
}

// One example through the graph.
Values evaluateOne(const Graph& g, const std::map<std::string, Dims>& shapes, Values input,
                   const ValueObserver* observe = nullptr) {
    if (observe) (*observe)(g.input, input);
    std::map<std::string, Values> values{{g.input, std::move(input)}};
    for (const Node& n : g.nodes) {
        const Values& x = values.at(n.inputs[0]);
        const Dims& in = shapes.at(n.inputs[0]);
        const Dims& out = shapes.at(n.output);
        Values y;
        switch (n.kind) {
            case OpKind::Conv: y = conv(g, n, x, in, out); break;
            case OpKind::Gemm: y = gemm(g, n, x, out); break;
            case OpKind::BatchNormalization: y = batchNorm(g, n, x, in); break;
            case OpKind::Relu:
                y = x;
                for (double& v : y) v = relu(v, true);
                break;
            case OpKind::MaxPool: y = maxPool(n, x, in, out); break;
            case OpKind::GlobalAveragePool: y = globalAveragePool(x, in); break;
            case OpKind::Flatten: y = x; break;
            case OpKind::Clip:
                y = x;
                for (double& v : y) v = std::min(std::max(v, double(n.clip_min)), double(n.clip_max));
                break;
            case OpKind::Add:
            case OpKind::Mul:
            case OpKind::Sub:
            case OpKind::Div: y = binary(g, n, x, in, values); break;
            case OpKind::Sigmoid:
                y = x;
                for (double& v : y) v = 1.0 / (1.0 + std::exp(-v));
                break;
            case OpKind::Tanh:
                y = x;
                for (double& v : y) v = std::tanh(v);
                break;
            case OpKind::Softmax: {
                // Over the last axis, row by row.
                y = x;
                const auto d = static_cast<std::ptrdiff_t>(in.back());
                for (auto row = y.begin(); row != y.end(); row += d) {
                    const double top = *std::max_element(row, row + d);
                    double sum = 0.0;
                    for (auto v = row; v != row + d; ++v) sum += (*v = std::exp(*v - top));
                    for (auto v = row; v != row + d; ++v) *v /= sum;
                }
                break;
            }
            case OpKind::Erf:
                y = x;
                for (double& v : y) v = std::erf(v);
                break;
            case OpKind::MatMul: y = matMul(g, n, x, in, out, values); break;
            case OpKind::Gather: y = gather(g, n, x, in); break;
            case OpKind::LayerNormalization: y = layerNorm(g, n, x, in); break;
            case OpKind::Reshape: y = x; break;
            case OpKind::Transpose: y = transpose(n, x, in, out); break;
            case OpKind::Concat: y = concat(n, values, shapes); break;
            case OpKind::AveragePool: y = averagePool(n, x, in, out); break;
        }
        if (observe) (*observe)(n.output, y);
        values[n.output] = std::move(y);
    }
    return values.at(g.output);
}

// Runs every example through the graph, each's logits to `out` when given.
void evaluateAll(const Graph& g, const float* x, int64_t n, const ValueObserver* observe, std::vector<float>* out) {
    if (g.weightless) throw GraphError("the model was stripped to its shapes (no weights): it can be estimated, not run");
    g.validate();
    const std::map<std::string, Dims> shapes = g.valueShapes();
    size_t per = 1;
    for (int64_t d : g.sample_shape) per *= static_cast<size_t>(d);
    for (int64_t e = 0; e < n; ++e) {
        Values input(per);
        for (size_t i = 0; i < per; ++i)
            input[i] = double(x[static_cast<size_t>(e) * per + i]) * g.metadata.input_scale + g.metadata.input_shift;
        const Values logits = evaluateOne(g, shapes, std::move(input), observe);
        if (out)
            for (double v : logits) out->push_back(static_cast<float>(v));
    }
}

}  // namespace

std::vector<float> evaluateReference(const Graph& g, const float* x, int64_t n) {
    std::vector<float> logits;
    logits.reserve(static_cast<size_t>(n * g.classes));
    evaluateAll(g, x, n, nullptr, &logits);
    return logits;
}

void observeReference(const Graph& g, const float* x, int64_t n, const ValueObserver& observe) {
    evaluateAll(g, x, n, &observe, nullptr);
}

}  // namespace trainbench::engine::graph
