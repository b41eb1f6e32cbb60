// Note [fp16 range]: precision="fp16" stores values as IEEE binary16, whose largest finite value
// is 65504. A model whose activations pass that (onnx's "light" ResNet-50 and ZFNet-512: every
// weight 0.02, activations up to ~1e10) would overflow to inf in half storage and return NaN. So
// before the half_storage pass rewrites the graph, this estimates, from the weights alone, how
// large each float value gets, and names the nodes that must stay float32: a node whose float
// inputs, outputs or weights may leave fp16's range. half_storage then keeps them float32 with
// Casts at their edges like any node without a half kernel, and the plan says why.
//
// The estimate propagates two moments per value from the graph inputs through the layers, as
// signal-propagation analyses of networks do: m (the mean) and q (the mean square), scalars over
// the whole tensor (channels averaged). For a linear layer y_c = sum_i w_ci x_i + b_c with inputs
// of mean m and mean square q, treated as independent given their mean:
//   E[y_c] = m sum_i w_ci + b_c,   E[y_c^2] = (q - m^2) sum_i w_ci^2 + E[y_c]^2,
// which is exact for such inputs and tight for both kinds of weights that matter: same-sign
// weights (the light models: E[y] grows by sum w = 0.02 x fan-in per layer) and trained or
// randomly initialised ones (sum w^2 ~ 2 / fan-in: the mean square stays put, as He init means
// it to). A sound interval bound (sum |w| per layer) would be far too loose for the latter: it
// grows ~25x per trained conv and would keep every deep model in float32.
// A value's peak is taken as kPeakSigmas x its root mean square (a Gaussian's maximum over a
// million values is ~5 standard deviations), and a node stays float32 when a peak it reads or
// writes, or one of its weights, exceeds 65504. With a calibration batch (dnnx.load(...,
// calibration=x): python/dnnx/_calibration.py) the measured moments and peaks of the values it
// saw replace the estimate there.
// Ops not modelled below make their outputs unknown, and an unknown value decides nothing (the
// node stays in half, as before this pass existed).
#include "runtime/passes/half_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "ops/layout/channels_last.h"
#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr double kHalfMax = 65504.0;
constexpr double kPeakSigmas = 8.0;

struct Moments {
  double m = 0;  // mean
  double q = 0;  // mean square (>= m^2)
  double peak = -1;  // measured max |value| (calibration), else -1: kPeakSigmas * sqrt(q)

  double estimated_peak() const { return peak >= 0 ? peak : kPeakSigmas * std::sqrt(std::max(q, 0.0)); }
};

using MomentMap = std::map<std::string, Moments>;

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

bool has_op(const std::string& op, const char* part) { return op.find(part) != std::string::npos; }

// The float32 constant `name` as doubles, or nullopt.
std::optional<std::vector<double>> constant_values(const Graph& graph, const std::string& name) {
  const ConstTensor* c = find_constant(graph, name);
  if (!c || c->info.dtype != DType::Float32) return std::nullopt;
  const int64_t n = numel(c->info.shape);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = c->as<float>()[i];
  return out;
}

Moments of_values(const std::vector<double>& v) {
  Moments out;
  double peak = 0;
  for (double x : v) {
    out.m += x;
    out.q += x * x;
    peak = std::max(peak, std::abs(x));
  }
  if (!v.empty()) out.m /= v.size(), out.q /= v.size();
  out.peak = peak;  // a constant's values are known exactly
  return out;
}

// Relu of a Gaussian with the given moments: E[relu(x)] = mu Phi + s phi, E[relu(x)^2] =
// (mu^2 + s^2) Phi + mu s phi, with Phi, phi at mu / s.
Moments relu(const Moments& x) {
  const double var = std::max(x.q - x.m * x.m, 0.0);
  const double s = std::sqrt(var);
  Moments out;
  if (s <= 0) {
    out.m = std::max(x.m, 0.0);
    out.q = out.m * out.m;
    return out;
  }
  const double z = x.m / s;
  const double Phi = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  out.m = x.m * Phi + s * phi;
  out.q = (x.m * x.m + var) * Phi + x.m * s * phi;
  return out;
}

// Channels averaged: each output channel's (mean, mean square) from its weights' sum and sum of
// squares (the linear-layer formula above), then the mean over channels.
struct ChannelSums {
  std::vector<double> sum, square;
};

// W's sums per output channel; the channel is W's axis `axis` (0 for Conv's [M, C/g, kh, kw] in
// either layout, Gemm's B: 0 when transB, else 1 of [K, N]).
std::optional<ChannelSums> channel_sums(const Graph& graph, const std::string& name, int axis) {
  const ConstTensor* c = find_constant(graph, name);
  if (!c || c->info.dtype != DType::Float32 || c->info.shape.size() < 2) return std::nullopt;
  const Shape& s = c->info.shape;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t channels = s[axis];
  ChannelSums out{std::vector<double>(channels), std::vector<double>(channels)};
  const float* w = c->as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t ch = 0; ch < channels; ++ch) {
      const float* p = w + (o * channels + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        out.sum[ch] += p[i];
        out.square[ch] += static_cast<double>(p[i]) * p[i];
      }
    }
  }
  return out;
}

Moments linear(const Moments& x, const ChannelSums& w, const std::vector<double>* bias, double alpha, double beta) {
  Moments out;
  const size_t n = w.sum.size();
  const double var = std::max(x.q - x.m * x.m, 0.0);
  for (size_t c = 0; c < n; ++c) {
    const double b = bias && !bias->empty() ? beta * (*bias)[bias->size() == n ? c : 0] : 0.0;
    const double mean = alpha * x.m * w.sum[c] + b;
    out.m += mean;
    out.q += alpha * alpha * var * w.square[c] + mean * mean;
  }
  if (n) out.m /= n, out.q /= n;
  return out;
}

// x + y for values treated as independent given their means.
Moments add(const Moments& a, const Moments& b, double sign = 1.0) {
  Moments out;
  out.m = a.m + sign * b.m;
  out.q = (a.q - a.m * a.m) + (b.q - b.m * b.m) + out.m * out.m;
  return out;
}

class RangeEstimate {
 public:
  RangeEstimate(const Graph& graph, const HalfCalibration& calibration)
      : graph_(graph), calibration_(calibration) {
    for (const GraphInput& in : graph.inputs) {
      if (in.dtype == DType::Float32) set(in.name, kAssumedInput);
    }
  }

  // node name -> why it stays float32, for every node whose range leaves fp16's.
  std::map<std::string, std::string> run() {
    std::map<std::string, std::string> out;
    for (const Node& node : graph_.nodes) {
      propagate(node);
      double peak = 0;
      std::string what;
      for (const std::string& name : node.inputs) {
        const Moments* v = get(name);
        if (!v || v->estimated_peak() <= peak) continue;
        peak = v->estimated_peak();
        what = find_constant(graph_, name) ? "weights" : "inputs";
      }
      for (const std::string& name : node.outputs) {
        const Moments* v = get(name);
        if (v && v->estimated_peak() > peak) peak = v->estimated_peak(), what = "activations";
      }
      if (peak > kHalfMax) {
        const bool measured = what != "weights" && measured_any(node);
        out[node.name] = "kept in fp32: " + what + " up to " + short_number(peak) +
                         (measured ? " (calibration)" : what == "weights" ? "" : " (estimated from the weights)") +
                         " exceed fp16's range (65504)";
      }
    }
    return out;
  }

 private:
  // Inputs with no calibration: values of magnitude up to 1 (pixels scaled to [0, 1], or
  // normalised features), taken as uniform on [0, 1]: mean 1/2, mean square 1/3.
  static constexpr Moments kAssumedInput{0.5, 1.0 / 3.0, -1};

  const Moments* get(const std::string& name) {
    if (name.empty()) return nullptr;
    auto it = moments_.find(name);
    if (it != moments_.end()) return &it->second;
    if (const auto values = constant_values(graph_, name)) return &(moments_[name] = of_values(*values));
    return nullptr;
  }

  void set(const std::string& name, Moments m) {
    auto c = calibration_.find(name);
    if (c != calibration_.end()) m = Moments{c->second.mean, c->second.square, c->second.peak};
    moments_[name] = m;
  }

  bool measured_any(const Node& node) const {
    for (const std::string& name : node.inputs) {
      if (calibration_.count(name)) return true;
    }
    for (const std::string& name : node.outputs) {
      if (calibration_.count(name)) return true;
    }
    return false;
  }

  std::optional<Moments> input(const Node& node, size_t i) {
    if (!node.has_input(i)) return std::nullopt;
    const Moments* m = get(node.inputs[i]);
    return m ? std::optional<Moments>(Moments{m->m, m->q, -1}) : std::nullopt;
  }

  void propagate(const Node& node) {
    const std::optional<Moments> y = output_moments(node);
    if (!y) return;
    for (const std::string& out : node.outputs) {
      if (!out.empty()) set(out, *y);
    }
  }

  std::optional<Moments> output_moments(const Node& node) {
    const std::string& op = node.op_type;
    const std::string base = op.substr(0, op.find('@'));  // "Conv+Relu@NHWC" -> "Conv+Relu"
    auto x = input(node, 0);
    if (!x) return std::nullopt;
    if (base.rfind("Conv", 0) == 0 && base.rfind("ConvTranspose", 0) != 0) {
      auto w = channel_sums(graph_, node.inputs.size() > 1 ? node.inputs[1] : "", 0);
      if (!w) return std::nullopt;
      auto bias = node.has_input(2) ? constant_values(graph_, node.inputs[2]) : std::nullopt;
      Moments y = linear(*x, *w, bias ? &*bias : nullptr, 1.0, 1.0);
      for (size_t i = 3; i < node.inputs.size(); ++i) {  // Conv+Add+Relu's residual
        auto z = input(node, i);
        if (!z) return std::nullopt;
        y = add(y, *z);
      }
      return has_op(base, "Relu") ? relu(y) : y;
    }
    if (base.rfind("Gemm", 0) == 0) {
      if (node.attr_int("transA", 0) != 0) return std::nullopt;
      const int axis = node.attr_int("transB", 0) ? 0 : 1;
      auto w = channel_sums(graph_, node.inputs.size() > 1 ? node.inputs[1] : "", axis);
      if (!w) return std::nullopt;
      auto bias = node.has_input(2) ? constant_values(graph_, node.inputs[2]) : std::nullopt;
      if (node.has_input(2) && !bias) return std::nullopt;
      const double alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
      Moments y = linear(*x, *w, bias ? &*bias : nullptr, alpha, beta);
      if (has_op(base, "Softmax")) return Moments{0.5, 1.0, -1};
      return has_op(base, "Relu") ? relu(y) : y;
    }
    if (base == "MatMul") {
      auto w = channel_sums(graph_, node.inputs.size() > 1 ? node.inputs[1] : "", 1);
      const ConstTensor* b = node.inputs.size() > 1 ? find_constant(graph_, node.inputs[1]) : nullptr;
      if (!w || b->info.shape.size() != 2) return std::nullopt;
      return linear(*x, *w, nullptr, 1.0, 1.0);
    }
    if (base == "Relu") return relu(*x);
    if (base == "LeakyRelu" || base == "Elu" || base == "Selu" || base == "PRelu") return *x;
    if (base == "Sigmoid" || base == "Softmax") return Moments{0.5, 1.0, -1};
    if (base == "Tanh") return Moments{0.0, std::min(x->q, 1.0), -1};
    if (base == "Clip") return clip(node, *x);
    if (base == "Add" || base == "Sub" || base == "Sum") {
      Moments y = *x;
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        auto z = input(node, i);
        if (!z) return std::nullopt;
        y = add(y, *z, base == "Sub" ? -1.0 : 1.0);
      }
      return y;
    }
    if (base == "Mul") {
      auto z = input(node, 1);
      if (!z) return std::nullopt;
      return Moments{x->m * z->m, x->q * z->q, -1};
    }
    if (base == "Div") {
      auto d = node.has_input(1) ? constant_values(graph_, node.inputs[1]) : std::nullopt;
      if (!d || d->empty()) return std::nullopt;
      double inv_square = 0;
      for (double v : *d) {
        if (v == 0) return std::nullopt;
        inv_square += 1.0 / (v * v);
      }
      inv_square /= d->size();
      return Moments{x->m * std::sqrt(inv_square), x->q * inv_square, -1};
    }
    if (base == "BatchNormalization") return batchnorm(node, *x);
    if (base == "BatchNormalization+Relu") {
      const std::optional<Moments> y = batchnorm(node, *x);
      return y ? std::optional<Moments>(relu(*y)) : std::nullopt;
    }
    if (base == "Concat" || base == "Max" || base == "Min") {
      Moments y = *x;
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        auto z = input(node, i);
        if (!z) return std::nullopt;
        y.m = std::abs(z->m) > std::abs(y.m) ? z->m : y.m;
        y.q = std::max(y.q, z->q);
      }
      return y;
    }
    // Values moved, pooled or normalised: no larger than their input (LRN divides by
    // (bias + ...)^beta >= 1 for the default bias of 1).
    static const char* const kSameRange[] = {
        "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose",
        "Squeeze", "Unsqueeze", "Identity", "Dropout", "Slice", "Split", "Gather", "Expand", "Pad", "LRN",
        kTransposePadOp, kSpaceToDepthOp,  // Notes [padded channels], [space to depth]: values moved, and zeros
        "ReduceMean", "ReduceMax", "ReduceMin"};
    for (const char* same : kSameRange) {
      if (base == same) return *x;
    }
    return std::nullopt;
  }

  std::optional<Moments> clip(const Node& node, const Moments& x) {
    double hi = node.attr_float("max", 0.0f), lo = node.attr_float("min", 0.0f);
    bool bounded = node.has_attr("max") && node.has_attr("min");
    if (node.inputs.size() >= 3) {
      auto a = node.has_input(1) ? constant_values(graph_, node.inputs[1]) : std::nullopt;
      auto b = node.has_input(2) ? constant_values(graph_, node.inputs[2]) : std::nullopt;
      bounded = a && b && !a->empty() && !b->empty();
      if (bounded) lo = (*a)[0], hi = (*b)[0];
    }
    if (!bounded) return x;
    const double limit = std::max(std::abs(lo), std::abs(hi));
    return Moments{std::clamp(x.m, lo, hi), std::min(x.q, limit * limit), -1};
  }

  // y_c = s_c (x - mean_c) / sqrt(var_c + eps) + b_c, per channel from constant statistics; from
  // their moments when they are graph inputs (typical gain sqrt(E[s^2] / (E[var] + eps))).
  std::optional<Moments> batchnorm(const Node& node, const Moments& x) {
    const double eps = node.attr_float("epsilon", 1e-5f);
    std::vector<std::optional<std::vector<double>>> p;
    for (size_t i = 1; i <= 4; ++i) {
      p.push_back(node.has_input(i) ? constant_values(graph_, node.inputs[i]) : std::nullopt);
    }
    const double var_x = std::max(x.q - x.m * x.m, 0.0);
    if (p[0] && p[1] && p[2] && p[3] && p[0]->size() == p[3]->size()) {
      Moments y;
      const size_t n = p[0]->size();
      for (size_t c = 0; c < n; ++c) {
        const double g = (*p[0])[c] / std::sqrt(std::max((*p[3])[c], 0.0) + eps);
        const double mean = g * (x.m - (*p[2])[c]) + (*p[1])[c];
        y.m += mean;
        y.q += g * g * var_x + mean * mean;
      }
      if (n) y.m /= n, y.q /= n;
      return y;
    }
    auto s = input(node, 1), b = input(node, 2), mean = input(node, 3), var = input(node, 4);
    if (!s || !b || !mean || !var) return std::nullopt;
    const double gain = std::sqrt(s->q / (std::max(var->m, 0.0) + eps));
    const double m = gain * (std::abs(x.m) + std::sqrt(mean->q)) + std::sqrt(b->q);
    return Moments{m, gain * gain * var_x + m * m, -1};
  }

  const Graph& graph_;
  const HalfCalibration& calibration_;
  MomentMap moments_;
};

}  // namespace

std::map<std::string, std::string> half_range_reasons(const Graph& graph, const HalfCalibration& calibration) {
  return RangeEstimate(graph, calibration).run();
}

}  // namespace dnnx
